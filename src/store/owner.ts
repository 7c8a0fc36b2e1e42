import { type Kysely, sql } from 'kysely';
import { InfrastructureError } from '../errors/index.js';
import { formatInstant } from '../time/instant.js';
import { NOT_SERVING } from './errors.js';
import type { Store } from './open.js';
import type { Database } from './schema.js';
import type { WorkerRecord, Workers } from './workers.js';

/** The worker that serves a SQLite store, as the store records it. Instants are UTC epoch ms. */
export interface StoreHolder {
  readonly workerId: string;
  readonly host: string;
  readonly pid: number;
  /** When it took the store. */
  readonly since: number;
  /** Its last lease renewal. */
  readonly heartbeatAt: number;
  readonly stoppedAt: number | null;
}

/**
 * Whether `holder` still serves its store at `now` (UTC epoch ms): it has not stopped and renewed
 * its lease within `leaseMs` (decisions §5). Both instants are wall-clock readings of the
 * processes sharing the store, so they compare across hosts and containers of one machine.
 */
export function stillServes(holder: StoreHolder | undefined, now: number, leaseMs: number): boolean {
  return holder !== undefined && holder.stoppedAt === null && holder.heartbeatAt >= now - leaseMs;
}

// The fence is a temporary trigger, which lives on the connection that made it: it binds only
// this process's writes, never those of a short command or a backup on another connection. It
// guards the insert of a run, which every claim makes: the later writes of a run (its start, its
// end) are compare-and-swaps on its worker and state, which a takeover has already moved on. One
// check per inserted row, a few microseconds of a claim.
const FENCE = sql.raw('ursa_fence_run_insert');

/**
 * The serving process of a SQLite store (decisions §5): the `store_owner` row names the worker
 * that serves it, and that worker's heartbeat is the lease. The store is the source of truth, so
 * a second process is refused whatever path, link, host name or container it comes from.
 */
export class StoreOwner {
  constructor(
    private readonly store: Store,
    private readonly workers: Workers,
  ) {}

  /** The worker the store records as its server, if any (live or not). */
  async holder(on: Kysely<Database> = this.store.db): Promise<StoreHolder | undefined> {
    const row = await on
      .selectFrom('store_owner')
      .innerJoin('workers', 'workers.id', 'store_owner.worker_id')
      .select([
        'workers.id',
        'workers.host',
        'workers.pid',
        'workers.heartbeat_at',
        'workers.stopped_at',
        'store_owner.since',
      ])
      .where('store_owner.slot', '=', 1)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      workerId: row.id,
      host: row.host,
      pid: Number(row.pid),
      since: Number(row.since),
      heartbeatAt: Number(row.heartbeat_at),
      stoppedAt: row.stopped_at === null ? null : Number(row.stopped_at),
    };
  }

  /**
   * Makes `worker` the one serving process of the store, in one write transaction (SQLite
   * `begin immediate`): refused while the recorded holder {@link stillServes} at `now` (UTC ms)
   * within `leaseMs`, and then nothing is written; otherwise the old holder is marked stopped (its
   * next heartbeat learns it lost the store), `worker` is registered with its heartbeat at `now`,
   * and the row names it.
   *
   * On SQLite the connection is also fenced: from then on each of its inserts of a run aborts
   * (`STORE_LOCKED`, the claim's transaction rolled back whole) unless the row still names
   * `worker`, so a process frozen past its lease whose store was taken over claims nothing; what
   * it had claimed the new holder took over, so its starts find nothing to start.
   *
   * @returns undefined when `worker` took the store; else the live holder that keeps it.
   */
  async take(
    worker: Pick<WorkerRecord, 'id' | 'host' | 'pid'>,
    now: number,
    leaseMs: number,
  ): Promise<StoreHolder | undefined> {
    return this.store.db.transaction().execute(async (trx) => {
      const holder = await this.holder(trx);
      if (holder !== undefined && stillServes(holder, now, leaseMs)) return holder;
      if (holder !== undefined && holder.stoppedAt === null)
        await this.workers.stop(holder.workerId, now, trx);
      await this.workers.register({ ...worker, startedAt: now }, trx);
      await trx
        .insertInto('store_owner')
        .values({ slot: 1, worker_id: worker.id, since: now })
        .onConflict((oc) => oc.column('slot').doUpdateSet({ worker_id: worker.id, since: now }))
        .execute();
      if (this.store.dialect === 'sqlite') await fence(trx, worker.id);
      return undefined;
    });
  }

  /** Deletes the row if it still names `workerId`: a process never releases another's store. */
  async release(workerId: string): Promise<void> {
    await this.store.db.deleteFrom('store_owner').where('worker_id', '=', workerId).execute();
  }

  /** The refusal of a second serving process: `STORE_LOCKED`, naming `holder` for the operator. */
  locked(holder: StoreHolder): InfrastructureError {
    return new InfrastructureError(
      'STORE_LOCKED',
      `store: ${this.store.location} is served by another Ursa process (worker ${holder.workerId}, host ${holder.host}, pid ${holder.pid}, lease renewed ${formatInstant(holder.heartbeatAt)}); a SQLite store serves one process — stop that one first, or use PostgreSQL (--db postgres://…) for several workers`,
      { field: 'db', value: this.store.location },
    );
  }
}

async function fence(trx: Kysely<Database>, workerId: string): Promise<void> {
  await sql`drop trigger if exists temp.${FENCE}`.execute(trx);
  await sql`create temp trigger ${FENCE} before insert on main.runs
    when not exists (select 1 from main.store_owner where worker_id = ${sql.lit(workerId)})
    begin select raise(abort, ${sql.lit(NOT_SERVING)}); end`.execute(trx);
}
