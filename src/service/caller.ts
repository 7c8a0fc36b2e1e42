import { type Actor, type ActorInterface, libraryActor } from '../store/audit.js';
import type { WriteGuard } from '../store/document-versions.js';

/**
 * Who asks (decisions §6): a user of a tenant, working in a project, with a role. The CLI acts as
 * an operator (`admin`); REST callers get the role of their token; agent tools act as their user.
 * Through what they ask (issue #19 audit trail): the token's id, the interface, and whether an
 * agent asks; a caller that says nothing of it is an application's call through the library.
 */
export interface Caller {
  readonly tenant: string;
  readonly project: string;
  readonly user: string;
  readonly role: 'read' | 'write' | 'admin';
  /** The id (never the secret) of the bearer token the request authenticated with. */
  readonly tokenId?: string | undefined;
  /** Default `library`. */
  readonly interface?: ActorInterface | undefined;
  /** True for an agent's tool call: its writes are marked as an agent's. */
  readonly agent?: boolean | undefined;
}

/** The audit trail's actor of a caller. */
export function actorOf(caller: Caller): Actor {
  return {
    ...libraryActor(caller.user),
    tokenId: caller.tokenId ?? null,
    interface: caller.interface ?? 'library',
    agent: caller.agent === true,
  };
}

/**
 * A writer's compare-and-swap (issue #19): the version it read (0: none), and the field it came
 * from (`If-Match` over REST, `expectedVersion` in a tool). Absent: last writer wins. `check` is a
 * rule of the writer's own on the stored document as the write holds it (the agents' lock gate).
 */
export type VersionGuard = Pick<WriteGuard, 'expectedVersion' | 'expectedField' | 'check'>;
