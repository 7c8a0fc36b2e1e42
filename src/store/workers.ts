import type { Kysely } from 'kysely';
import type { Store } from './open.js';
import { OWN_STORE } from './process-groups.js';
import type { Database } from './schema.js';

/** A worker process of a store (decisions §5). Instants are UTC epoch ms. */
export interface WorkerRecord {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly heartbeatAt: number;
  readonly stoppedAt: number | null;
}

/** Worker registrations and heartbeats: a worker's heartbeat is the lease of every run it holds. */
export class Workers {
  constructor(private readonly store: Store) {}

  /**
   * Registers a worker live on this store (its identity, issue #26), its heartbeat at its start;
   * `on` is the caller's transaction, if any.
   */
  async register(
    worker: Omit<WorkerRecord, 'stoppedAt' | 'heartbeatAt'>,
    on: Kysely<Database> = this.store.db,
  ): Promise<void> {
    await on
      .insertInto('workers')
      .values({
        id: worker.id,
        host: worker.host,
        pid: worker.pid,
        started_at: worker.startedAt,
        heartbeat_at: worker.startedAt,
        stopped_at: null,
        store_id: OWN_STORE,
      })
      .execute();
  }

  /**
   * Renews the lease of worker `id` at `now` (UTC ms), through {@link Store.leaseDb}. Returns
   * false when the worker had been retired as lost meanwhile (it stalled longer than the lease):
   * it is registered live again, and the caller must treat what it was running as ended by the
   * others.
   */
  async heartbeat(id: string, now: number): Promise<boolean> {
    const renewed = await this.store.leaseDb
      .updateTable('workers')
      .set({ heartbeat_at: now })
      .where('id', '=', id)
      .where('stopped_at', 'is', null)
      .executeTakeFirst();
    if (Number(renewed.numUpdatedRows) === 1) return true;
    await this.store.leaseDb
      .updateTable('workers')
      .set({ heartbeat_at: now, stopped_at: null })
      .where('id', '=', id)
      .execute();
    return false;
  }

  /** Marks worker `id` stopped: its lease ends at once. `on` is the caller's transaction, if any. */
  async stop(id: string, now: number, on: Kysely<Database> = this.store.db): Promise<void> {
    await on.updateTable('workers').set({ stopped_at: now }).where('id', '=', id).execute();
  }

  /** Ids of the workers whose lease holds at `now`: not stopped, heartbeat within `ttlMs`. */
  async live(now: number, ttlMs: number): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom('workers')
      .select('id')
      .where('stopped_at', 'is', null)
      .where('heartbeat_at', '>=', now - ttlMs)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Whether a worker may have left work behind at `now` (UTC ms): one not stopped whose heartbeat
   * is older than `ttlMs`, or one stopped (or retired) within the last `recentMs` (issue #24).
   */
  async anyGone(now: number, ttlMs: number, recentMs: number): Promise<boolean> {
    const row = await this.store.db
      .selectFrom('workers')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('stopped_at', 'is', null), eb('heartbeat_at', '<', now - ttlMs)]),
          eb('stopped_at', '>=', now - recentMs),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Marks every worker whose lease lapsed at `now` (heartbeat older than `ttlMs`) as stopped;
   * returns their ids. One statement: a worker that renews while it runs is not retired.
   */
  async retireLapsed(now: number, ttlMs: number): Promise<string[]> {
    const retired = await this.store.db
      .updateTable('workers')
      .set({ stopped_at: now })
      .where('stopped_at', 'is', null)
      .where('heartbeat_at', '<', now - ttlMs)
      .returning('id')
      .execute();
    return retired.map((w) => w.id);
  }
}
