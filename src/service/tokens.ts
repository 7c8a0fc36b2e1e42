import type { Runtime } from '../runtime/context.js';
import type { Role, TokenCheck, TokenRecord } from '../store/tokens.js';

/**
 * Bearer tokens (decisions §6, issue #19): creating, listing, revoking and rotating them, the
 * first admin token of a fresh store, and checking a secret a request presents. Secrets are
 * returned once, when made, and never stored; instants are UTC epoch ms.
 */

/** What {@link createToken} binds a token to: `tenant` null is every tenant, `project` null every project. */
export interface NewToken {
  readonly tenant: string | null;
  readonly project?: string | null;
  readonly role: Role;
  readonly user: string;
  readonly label?: string | null;
  /** When it stops working (UTC epoch ms); null or absent: never. */
  readonly expiresAt?: number | null;
}

/** Creates a token at `now` (UTC epoch ms); returns it with its secret, shown once. */
export function createToken(
  rt: Pick<Runtime, 'repos'>,
  input: NewToken,
  now: number,
): Promise<{ token: TokenRecord; secret: string }> {
  return rt.repos.tokens.create(input, now);
}

/**
 * On a store without an unrevoked token (the first start), creates an admin token for every tenant
 * (user `admin`) at the runtime's now and returns it with its secret; undefined when one exists.
 */
export async function createFirstAdminToken(
  rt: Pick<Runtime, 'repos' | 'clock'>,
): Promise<{ token: TokenRecord; secret: string } | undefined> {
  if ((await rt.repos.tokens.liveCount()) > 0) return undefined;
  return rt.repos.tokens.create(
    { tenant: null, role: 'admin', user: 'admin', label: 'created on first start' },
    rt.clock.now(),
  );
}

/** Every token of the store, oldest first, revoked and expired ones included (never a secret). */
export function listTokens(rt: Pick<Runtime, 'repos'>): Promise<TokenRecord[]> {
  return rt.repos.tokens.list();
}

/** Revokes token `id` at the runtime's now; false when there is no unrevoked token with that id. */
export function revokeToken(rt: Pick<Runtime, 'repos' | 'clock'>, id: string): Promise<boolean> {
  return rt.repos.tokens.revoke(id, rt.clock.now());
}

/**
 * Gives the live token `id` a new secret at `now` (UTC epoch ms); the old one works `graceMs`
 * milliseconds more (0: it stops now; the caller checks the bound). Undefined when there is no live
 * token with that id.
 */
export function rotateToken(
  rt: Pick<Runtime, 'repos'>,
  id: string,
  now: number,
  graceMs: number,
): Promise<{ token: TokenRecord; secret: string } | undefined> {
  return rt.repos.tokens.rotate(id, now, graceMs);
}

/**
 * Checks a bearer secret at the runtime's now, recording a live token's use (throttled):
 * `live` with the token, `expired`, or `unknown`. Nothing is cached.
 *
 * @throws the store's error when it cannot be read (e.g. InfrastructureError `STORE_UNAVAILABLE`).
 */
export function checkToken(rt: Pick<Runtime, 'repos' | 'clock'>, secret: string): Promise<TokenCheck> {
  return rt.repos.tokens.authenticate(secret, rt.clock.now());
}
