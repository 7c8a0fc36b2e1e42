import type { Insertable, Selectable, Updateable } from 'kysely';
import { type AuditEntry, writeAudited } from './audit.js';
import type { Fence } from './fencing.js';
import { heldByDead, type Liveness } from './liveness.js';
import type { Store } from './open.js';
import type { ProcessesTable } from './schema.js';

/** Process statuses (decisions §2). The first five are "still active" (spec §5). */
export type ProcessStatus =
  | 'ready'
  | 'running'
  | 'paused'
  | 'blocked'
  | 'suspended'
  | 'done'
  | 'stopped'
  | 'failed';
export const ACTIVE_STATUSES: readonly ProcessStatus[] = [
  'ready',
  'running',
  'paused',
  'blocked',
  'suspended',
];

/** Where a process came from (spec §1 `triggerOrigin`). `scheduledFor` is UTC epoch ms. */
export interface TriggerOrigin {
  readonly source: string;
  readonly scheduledFor: number;
  readonly correlationId: string;
  /** How the scheduler run was triggered, or `workflow` for a step of a workflow run (issue #10). */
  readonly trigger: 'cron' | 'at' | 'manual' | 'backfill' | 'workflow';
}

/** A process. Instants are UTC epoch ms. */
export interface ProcessRecord {
  readonly id: string;
  readonly tenant: string;
  readonly project: string;
  readonly sessionId: string;
  readonly recipe: string;
  readonly engine: string;
  readonly status: ProcessStatus;
  readonly ownerUser: string;
  readonly triggerOrigin: TriggerOrigin;
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage: string | null;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
  readonly exitCode: number | null;
  readonly reason: string | null;
  readonly outputTail: string | null;
  readonly errorTail: string | null;
}

const num = (v: number | null) => (v === null ? null : Number(v));

function toProcess(row: Selectable<ProcessesTable>): ProcessRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    project: row.project,
    sessionId: row.session_id,
    recipe: row.recipe,
    engine: row.engine,
    status: row.status as ProcessStatus,
    ownerUser: row.owner_user,
    triggerOrigin: JSON.parse(row.trigger_origin) as TriggerOrigin,
    params: JSON.parse(row.params) as Record<string, unknown>,
    initialMessage: row.initial_message,
    createdAt: Number(row.created_at),
    startedAt: num(row.started_at),
    endedAt: num(row.ended_at),
    exitCode: num(row.exit_code),
    reason: row.reason,
    outputTail: row.output_tail,
    errorTail: row.error_tail,
  };
}

/** A process as created: not started, not ended. */
export type NewProcess = Omit<
  ProcessRecord,
  'startedAt' | 'endedAt' | 'exitCode' | 'reason' | 'outputTail' | 'errorTail'
>;

/** The table row of a new process; `startedAt` (UTC ms) for one created already running. */
export function processRow(p: NewProcess, startedAt: number | null = null): Insertable<ProcessesTable> {
  return {
    id: p.id,
    tenant: p.tenant,
    project: p.project,
    session_id: p.sessionId,
    recipe: p.recipe,
    engine: p.engine,
    status: p.status,
    owner_user: p.ownerUser,
    trigger_origin: JSON.stringify(p.triggerOrigin),
    params: JSON.stringify(p.params),
    initial_message: p.initialMessage,
    created_at: p.createdAt,
    started_at: startedAt,
    ended_at: null,
    exit_code: null,
    reason: null,
    output_tail: null,
    error_tail: null,
  };
}

/** Processes: created per run, moved through their statuses. */
export class Processes {
  constructor(private readonly store: Store) {}

  async get(id: string): Promise<ProcessRecord | undefined> {
    const row = await this.store.db
      .selectFrom('processes')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : toProcess(row);
  }

  async create(p: NewProcess): Promise<void> {
    await this.store.db.insertInto('processes').values(processRow(p)).execute();
  }

  /**
   * Updates a process that is in one of `from`; returns false when it was not (already ended) or,
   * with `fence`, when its run is no longer at that attempt (another worker ended it or started
   * it again: the process's record is theirs to write, `src/store/fencing.ts`); with `outputWas`,
   * when its output tail is no longer that (a compare-and-swap for appending to it).
   */
  async transition(
    id: string,
    from: readonly ProcessStatus[],
    values: Updateable<ProcessesTable>,
    fence?: Fence,
    outputWas?: string | null,
  ): Promise<boolean> {
    let query = this.store.db
      .updateTable('processes')
      .set(values)
      .where('id', '=', id)
      .where('status', 'in', [...from]);
    if (outputWas !== undefined) query = query.where('output_tail', 'is not distinct from', outputWas);
    if (fence !== undefined)
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('runs')
            .select('runs.correlation_id')
            .where('runs.correlation_id', '=', fence.correlationId)
            .where('runs.state', '=', 'started')
            .where('runs.fencing_token', 'is not distinct from', fence.fencingToken),
        ),
      );
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Asks for a process to stop (spec §5 `processStop`), on whichever worker runs it: that worker
   * stops it at its next look. False when the process is not active (stopping a finished one is
   * not an error, just nothing to do). With `audit`, the stop is recorded with it in one
   * transaction (issue #19), when it stops the process.
   */
  async requestStop(id: string, reason: string, now: number, audit?: AuditEntry): Promise<boolean> {
    return writeAudited(
      this.store.db,
      async (db) => {
        const result = await db
          .updateTable('processes')
          .set({ stop_requested_at: now, stop_reason: reason })
          .where('id', '=', id)
          .where('status', 'in', [...ACTIVE_STATUSES])
          .where('stop_requested_at', 'is', null)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      },
      audit === undefined ? undefined : (stopping) => (stopping ? audit : undefined),
    );
  }

  /** Of the given processes, those for which a stop was requested, with the reason. */
  async stopRequested(ids: readonly string[]): Promise<{ id: string; stopReason: string | null }[]> {
    if (ids.length === 0) return [];
    const rows = await this.store.db
      .selectFrom('processes')
      .select(['id', 'stop_reason'])
      .where('id', 'in', [...ids])
      .where('stop_requested_at', 'is not', null)
      .execute();
    return rows.map((r) => ({ id: r.id, stopReason: r.stop_reason }));
  }

  /**
   * Active processes that no live worker runs, at most `limit` ids; whether a worker is live is
   * decided by `liveness` as this statement runs (decisions §5). A worker killed between creating
   * a process and ending it leaves such a row.
   *
   * - A scheduler run's process: its run is no longer `started` (another worker ended it when
   *   this one's lease lapsed), or the run's worker is not live.
   * - A workflow step's process: its workflow run is no longer running, or the workflow run's
   *   worker is not live (a workflow run without a worker is not a lost worker's).
   * - A process that is neither (its run or step no longer names it).
   */
  async orphaned(liveness: Liveness, limit: number): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom('processes as p')
      .leftJoin('runs as r', 'r.process_id', 'p.id')
      .leftJoin('workflow_steps as s', 's.process_id', 'p.id')
      .leftJoin('workflow_runs as w', 'w.id', 's.run_id')
      .select('p.id')
      .where('p.status', 'in', [...ACTIVE_STATUSES])
      .where((eb) =>
        eb.or([
          eb.and([
            eb('r.correlation_id', 'is not', null),
            eb.or([
              eb('r.state', '!=', 'started'),
              eb('r.worker_id', 'is', null),
              heldByDead('r.worker_id', liveness),
            ]),
          ]),
          eb.and([
            eb('r.correlation_id', 'is', null),
            eb('w.id', 'is not', null),
            eb.or([
              eb('w.status', '!=', 'running'),
              eb.and([eb('w.worker_id', 'is not', null), heldByDead('w.worker_id', liveness)]),
            ]),
          ]),
          eb.and([eb('r.correlation_id', 'is', null), eb('w.id', 'is', null)]),
        ]),
      )
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Processes in one of the given statuses. */
  async withStatus(statuses: readonly ProcessStatus[]): Promise<ProcessRecord[]> {
    const rows = await this.store.db
      .selectFrom('processes')
      .selectAll()
      .where('status', 'in', [...statuses])
      .execute();
    return rows.map(toProcess);
  }
}
