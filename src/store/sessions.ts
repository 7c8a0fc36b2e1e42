import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { isUniqueViolation } from './errors.js';
import type { Store } from './open.js';
import type { SessionsTable } from './schema.js';

/** A session (spec §6). `createdAt` is UTC epoch ms. */
export interface Session {
  readonly id: string;
  readonly tenant: string;
  readonly project: string;
  readonly name: string;
  readonly ownerUser: string;
  readonly system: boolean;
  readonly status: 'idle' | 'archived';
  readonly createdAt: number;
}

function toSession(row: Selectable<SessionsTable>): Session {
  return {
    id: row.id,
    tenant: row.tenant,
    project: row.project,
    name: row.name,
    ownerUser: row.owner_user,
    system: Number(row.system) === 1,
    status: row.status as Session['status'],
    createdAt: Number(row.created_at),
  };
}

/** Sessions: found by name, created on first use. */
export class Sessions {
  constructor(private readonly store: Store) {}

  async get(id: string): Promise<Session | undefined> {
    const row = await this.store.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : toSession(row);
  }

  async byName(tenant: string, project: string, name: string): Promise<Session | undefined> {
    const row = await this.store.db
      .selectFrom('sessions')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where('name', '=', name)
      .executeTakeFirst();
    return row === undefined ? undefined : toSession(row);
  }

  /** The session of that name, created (as `system`, owned by `ownerUser`) if it does not exist yet. */
  async getOrCreate(
    tenant: string,
    project: string,
    name: string,
    ownerUser: string,
    now: number,
  ): Promise<Session> {
    const existing = await this.byName(tenant, project, name);
    if (existing !== undefined) return existing;
    const session: Session = {
      id: `sess_${randomUUID()}`,
      tenant,
      project,
      name,
      ownerUser,
      system: true,
      status: 'idle',
      createdAt: now,
    };
    try {
      await this.store.db
        .insertInto('sessions')
        .values({
          id: session.id,
          tenant,
          project,
          name,
          owner_user: ownerUser,
          system: 1,
          status: session.status,
          created_at: now,
        })
        .execute();
      return session;
    } catch (error) {
      // Created concurrently by another worker: use theirs.
      if (!isUniqueViolation(error)) throw error;
      return (await this.byName(tenant, project, name)) as Session;
    }
  }
}
