import { randomUUID } from 'node:crypto';
import type { Insertable, Selectable } from 'kysely';
import { isUniqueViolation } from './errors.js';
import type { Store } from './open.js';
import { type SchedulerKey, schedulerKeyString } from './schedules.js';
import type { SessionsTable } from './schema.js';
import { rowIn } from './values.js';

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
  /** For a scheduler's system session: the scheduler and the session's version (spec §6). */
  readonly scheduler: string | null;
  readonly version: number | null;
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
    scheduler: row.scheduler,
    version: row.version === null ? null : Number(row.version),
  };
}

/** A new idle system session (`scheduler`/`version` null for one of no scheduler); `now` is UTC ms. */
function newSystemSession(
  key: { tenant: string; project: string; name: string },
  owner: string,
  now: number,
  scheduler: string | null = null,
  version: number | null = null,
): Session {
  return {
    id: `sess_${randomUUID()}`,
    ...key,
    ownerUser: owner,
    system: true,
    status: 'idle',
    createdAt: now,
    scheduler,
    version,
  };
}

function sessionRow(session: Session): Insertable<SessionsTable> {
  return {
    id: session.id,
    tenant: session.tenant,
    project: session.project,
    name: session.name,
    owner_user: session.ownerUser,
    system: session.system ? 1 : 0,
    status: session.status,
    created_at: session.createdAt,
    scheduler: session.scheduler,
    version: session.version,
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

  /**
   * The newest live system session of each scheduler in `keys` (one query, for a batch of
   * starts), by `tenant\0project\0scheduler`. A scheduler without one is absent: its first
   * fire creates it through {@link systemSession}.
   */
  async currentSystemSessions(keys: readonly SchedulerKey[]): Promise<Map<string, Session>> {
    if (keys.length === 0) return new Map();
    const rows = await this.store.db
      .selectFrom('sessions')
      .selectAll()
      .where('status', '!=', 'archived')
      .where(
        rowIn(
          ['tenant', 'project', 'scheduler'],
          keys.map((k) => [k.tenant, k.project, k.name]),
        ),
      )
      .execute();
    const newest = new Map<string, Session>();
    for (const session of rows.map(toSession)) {
      const key = schedulerKeyString({ ...session, name: session.scheduler ?? '' });
      const seen = newest.get(key);
      if (seen === undefined || (seen.version ?? 0) < (session.version ?? 0)) newest.set(key, session);
    }
    return newest;
  }

  /**
   * Creates a system session that belongs to no scheduler (a workflow run's `_magrathea_<runId>`,
   * issue #10), owned by `owner`. `now` is UTC ms.
   *
   * @throws the store's unique violation when (tenant, project, name) exists.
   */
  async createSystem(
    tenant: string,
    project: string,
    name: string,
    owner: string,
    now: number,
  ): Promise<Session> {
    const session = newSystemSession({ tenant, project, name }, owner, now);
    await this.store.db.insertInto('sessions').values(sessionRow(session)).execute();
    return session;
  }

  /**
   * Creates, in one statement, the first system session (`_ursascheduler_<name>`, version 1,
   * spec §6) of each scheduler in `firsts` that has none yet, owned by its `runAs`; one that
   * exists (made meanwhile by another worker) is left alone. `now` is UTC ms.
   */
  async createFirstSystemSessions(
    firsts: readonly (SchedulerKey & { readonly runAs: string })[],
    now: number,
  ): Promise<void> {
    if (firsts.length === 0) return;
    await this.store.db
      .insertInto('sessions')
      .values(
        firsts.map((f) =>
          sessionRow(
            newSystemSession(
              { tenant: f.tenant, project: f.project, name: `_ursascheduler_${f.name}` },
              f.runAs,
              now,
              f.name,
              1,
            ),
          ),
        ),
      )
      .onConflict((oc) => oc.columns(['tenant', 'project', 'name']).doNothing())
      .execute();
  }

  /**
   * The system session a scheduler's runs go to (spec §6): `_ursascheduler_<name>`, owned by
   * `runAs`, created on the first fire. When `runAs` changes, the old session stays for history
   * and a new one is created and used: `_ursascheduler_<name>_v2`, then `_v3`, …
   */
  async systemSession(
    tenant: string,
    project: string,
    scheduler: string,
    runAs: string,
    now: number,
  ): Promise<Session> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const latest = await this.store.db
        .selectFrom('sessions')
        .selectAll()
        .where('tenant', '=', tenant)
        .where('project', '=', project)
        .where('scheduler', '=', scheduler)
        .where('status', '!=', 'archived')
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (latest !== undefined && latest.owner_user === runAs) return toSession(latest);
      const newest = await this.store.db
        .selectFrom('sessions')
        .select((eb) => eb.fn.max('version').as('v'))
        .where('tenant', '=', tenant)
        .where('project', '=', project)
        .where('scheduler', '=', scheduler)
        .executeTakeFirst();
      const version = Number(newest?.v ?? 0) + 1;
      const name = version === 1 ? `_ursascheduler_${scheduler}` : `_ursascheduler_${scheduler}_v${version}`;
      const session = newSystemSession({ tenant, project, name }, runAs, now, scheduler, version);
      try {
        await this.store.db.insertInto('sessions').values(sessionRow(session)).execute();
        return session;
      } catch (error) {
        // Another worker created this version at the same moment: look again.
        if (!isUniqueViolation(error)) throw error;
      }
    }
    throw new Error(`cannot create a system session for ${scheduler}`);
  }

  /** Archives every system session of a scheduler (spec §6: when its document is deleted). */
  async archiveSchedulerSessions(tenant: string, project: string, scheduler: string): Promise<number> {
    const result = await this.store.db
      .updateTable('sessions')
      .set({ status: 'archived' })
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where('scheduler', '=', scheduler)
      .where('status', '!=', 'archived')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
