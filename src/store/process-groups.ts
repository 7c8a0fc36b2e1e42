import { sql } from 'kysely';
import { heldByDead, type Liveness } from './liveness.js';
import type { Store } from './open.js';

/** Which group of which process: the key of a recorded group. */
export interface ProcessGroupKey {
  /** The Ursa process (`proc_…`) whose engine started the group. */
  readonly processId: string;
  /** The OS process group id: the pid of its leader. */
  readonly pgid: number;
}

/** A process group as a worker records it when its engine started it (decisions §5 fencing). */
export interface ProcessGroupRecord extends ProcessGroupKey {
  readonly workerId: string;
  readonly host: string;
  /** The kernel's boot id; null where the platform has none. */
  readonly bootId: string | null;
  /** The pid namespace (`pid:[…]`); null where the platform has none. */
  readonly pidNamespace: string | null;
  /** The leader's start time, clock ticks since boot; null where it could not be read. */
  readonly leaderStartTicks: number | null;
  /** UTC epoch ms. */
  readonly recordedAt: number;
}

/** A group a worker that is no longer live left open, with the run that started it, if any. */
export interface LeftoverGroup extends ProcessGroupRecord {
  /** The scheduler whose run started it; null for a workflow step or a run not recorded yet. */
  readonly scheduler: string | null;
  readonly tenant: string | null;
  readonly project: string | null;
}

/**
 * Where a group was recorded. The boot id and pid namespace identify the kernel that gave its
 * pids out: a leftover must match them to be ours. The host name is for logs, and to tell rows
 * apart only where the platform has neither (nothing is signalled there).
 */
export interface GroupPlace {
  readonly host: string;
  readonly bootId: string | null;
  readonly pidNamespace: string | null;
}

const num = (value: number | string | null) => (value === null ? null : Number(value));

/** This store's own identity (`store_identity`, issue #26), read by the statement that uses it. */
export const OWN_STORE = sql<string>`(select store_id from store_identity where slot = 1)`;

/**
 * The process groups workers started (table `process_groups`, decisions §5 fencing): a row from
 * the moment an engine reported its group until the engine returned (then it is deleted); a row a
 * dead worker left is a leftover, ended by a later worker on the same host and kept as ended.
 */
export class ProcessGroups {
  constructor(private readonly store: Store) {}

  /**
   * Records groups in one statement, each with this store's identity (issue #26); a group recorded
   * already (a retried write) is left as it is.
   */
  async record(groups: readonly ProcessGroupRecord[]): Promise<void> {
    if (groups.length === 0) return;
    await this.store.db
      .insertInto('process_groups')
      .values(
        groups.map((g) => ({
          process_id: g.processId,
          pgid: g.pgid,
          worker_id: g.workerId,
          host: g.host,
          boot_id: g.bootId,
          pid_namespace: g.pidNamespace,
          leader_start_ticks: g.leaderStartTicks,
          recorded_at: g.recordedAt,
          ended_at: null,
          ending: null,
          store_id: OWN_STORE,
        })),
      )
      .onConflict((oc) => oc.columns(['process_id', 'pgid']).doNothing())
      .execute();
  }

  /**
   * Deletes the open rows of these processes, whose engines returned (their groups ended with
   * them), in one statement.
   */
  async forget(processIds: readonly string[]): Promise<void> {
    if (processIds.length === 0) return;
    await this.store.db
      .deleteFrom('process_groups')
      .where('process_id', 'in', [...processIds])
      .where('ended_at', 'is', null)
      .execute();
  }

  /**
   * The open groups recorded at `place` by workers that are not live by `liveness` as this
   * statement runs, at most `limit`, oldest first. At `place` means the same boot id and pid
   * namespace, whatever the host name was (a host renamed at runtime still ends its leftovers);
   * where `place` has no boot id or no namespace (no `/proc`), the rows of its host name that
   * have none either. Only groups this store recorded: a copy of a store never takes the groups
   * of the store it was copied from for its own leftovers (issue #26).
   */
  async leftovers(place: GroupPlace, liveness: Liveness, limit: number): Promise<LeftoverGroup[]> {
    let query = this.store.db
      .selectFrom('process_groups as g')
      .leftJoin('runs as r', 'r.process_id', 'g.process_id')
      .select([
        'g.process_id',
        'g.pgid',
        'g.worker_id',
        'g.host',
        'g.boot_id',
        'g.pid_namespace',
        'g.leader_start_ticks',
        'g.recorded_at',
        'r.name',
        'r.tenant',
        'r.project',
      ])
      .where('g.ended_at', 'is', null)
      .where('g.store_id', '=', OWN_STORE)
      .where(heldByDead('g.worker_id', liveness));
    query =
      place.bootId !== null && place.pidNamespace !== null
        ? query.where('g.boot_id', '=', place.bootId).where('g.pid_namespace', '=', place.pidNamespace)
        : query
            .where('g.host', '=', place.host)
            .where('g.boot_id', place.bootId === null ? 'is' : '=', place.bootId)
            .where('g.pid_namespace', place.pidNamespace === null ? 'is' : '=', place.pidNamespace);
    const rows = await query.orderBy('g.recorded_at').limit(limit).execute();
    return rows.map((r) => ({
      processId: r.process_id,
      pgid: Number(r.pgid),
      workerId: r.worker_id,
      host: r.host,
      bootId: r.boot_id,
      pidNamespace: r.pid_namespace,
      leaderStartTicks: num(r.leader_start_ticks),
      recordedAt: Number(r.recorded_at),
      scheduler: r.name ?? null,
      tenant: r.tenant ?? null,
      project: r.project ?? null,
    }));
  }

  /**
   * Of `processIds`, those whose run or workflow step was held by a worker registered on another
   * store (issue #26): a copied store's runs name the source's workers and processes, whose
   * processes may still run on this host under the source's live workers. A worker this store
   * does not know (it died before it registered) counts as this store's.
   */
  async heldElsewhere(processIds: readonly string[]): Promise<Set<string>> {
    if (processIds.length === 0) return new Set();
    const ids = [...processIds];
    const rows = await this.store.db
      .selectFrom('runs as r')
      .innerJoin('workers as w', 'w.id', 'r.worker_id')
      .select('r.process_id')
      .where('r.process_id', 'in', ids)
      .where('w.store_id', '<>', OWN_STORE)
      .union((db) =>
        db
          .selectFrom('workflow_steps as s')
          .innerJoin('workflow_runs as wr', 'wr.id', 's.run_id')
          .innerJoin('workers as w', 'w.id', 'wr.worker_id')
          .select('s.process_id')
          .where('s.process_id', 'in', ids)
          .where('w.store_id', '<>', OWN_STORE),
      )
      .execute();
    return new Set(rows.flatMap((r) => (r.process_id === null ? [] : [r.process_id])));
  }

  /**
   * Marks a leftover ended at `at` (UTC ms) with how it went (`ended`, `survived`, `gone`,
   * `reused`, `unverified`); false when it was marked already (another worker got there first).
   */
  async markEnded(key: ProcessGroupKey, at: number, ending: string): Promise<boolean> {
    const result = await this.store.db
      .updateTable('process_groups')
      .set({ ended_at: at, ending })
      .where('process_id', '=', key.processId)
      .where('pgid', '=', key.pgid)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
