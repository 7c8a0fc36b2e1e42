import { type Insertable, sql, type Updateable } from 'kysely';
import type { FoldedRuns, Run } from '../runs/run.js';
import { type AuditEntry, writeAudited } from './audit.js';
import { isUniqueViolation } from './errors.js';
import { checkLimit } from './feed.js';
import { planByKeys } from './key-plans.js';
import { heldByDead, type Liveness } from './liveness.js';
import type { Store } from './open.js';
import { ACTIVE_STATUSES, type ProcessRecord } from './processes.js';
import { DOCUMENT_COLUMNS, FEED_COLUMNS } from './row-kinds.js';
import { type RunCounts, runCounts } from './run-counts.js';
import { foldedRuns } from './run-folds.js';
import { runRow, toRun } from './run-rows.js';
import { latestFinalOutcomes } from './run-streak.js';
import { runsStarted } from './runs-started.js';
import type { SchedulerKey } from './schedules.js';
import type { DocumentsTable, FeedTable, RunsTable } from './schema.js';
import { insertRows, valuesList } from './values.js';

export { runRow } from './run-rows.js';

/**
 * One run of {@link Runs.endMany}: the run as ended (`state` ended, `outcome`, `reason`,
 * `endedAt` set; `workerId` the worker that holds it), its process's final state, its END line,
 * and its final run log (undefined when run logs are off).
 */
export interface RunEnd {
  readonly run: Run;
  /** The state the run must still be in to be ended here; default `started`. */
  readonly from?: Run['state'];
  /** Absent for a run without a process of its own (a workflow target). */
  readonly process:
    | Pick<ProcessRecord, 'id' | 'status' | 'endedAt' | 'exitCode' | 'reason' | 'outputTail' | 'errorTail'>
    | undefined;
  readonly line: Insertable<FeedTable>;
  /**
   * A START line to append before the END line, for a run recorded started without one (a worker
   * of an earlier version that died between its start and its START line, issue #20).
   */
  readonly opening?: Insertable<FeedTable> | undefined;
  readonly log: Insertable<DocumentsTable> | undefined;
}

/** A run (one claimed occurrence), keyed by state: see `src/runs`. */
export type { Run } from '../runs/run.js';

/** How many runs one statement of {@link Runs.takeOverMany} moves: well under either store's bound parameters. */
const TAKE_OVER_CHUNK = 500;

/** Runs: read, list per scheduler, and move through their states. */
export class Runs {
  constructor(private readonly store: Store) {}

  /** How many runs of a scheduler started since its document was created (see `runsStarted`). */
  async started(key: SchedulerKey): Promise<number> {
    return runsStarted(this.store.db, key);
  }

  /** A scheduler's runs by outcome (see `runCounts`). */
  async counts(key: SchedulerKey, options: { visibleToAgents?: boolean } = {}): Promise<RunCounts> {
    return runCounts(this.store.db, key, options);
  }

  /** The latest final outcomes of a scheduler's runs since `since` (see `latestFinalOutcomes`). */
  async finalOutcomes(key: SchedulerKey, since: number, limit: number): Promise<string[]> {
    return latestFinalOutcomes(this.store.db, key, since, limit);
  }

  async get(correlationId: string): Promise<Run | undefined> {
    const row = await this.store.db
      .selectFrom('runs')
      .selectAll()
      .where('correlation_id', '=', correlationId)
      .executeTakeFirst();
    return row === undefined ? undefined : toRun(row);
  }

  /**
   * Inserts a run row; false when its occurrence already has a run (the unique key of decisions §4).
   * With `audit` (a manual fire, issue #19), its audit row is written in the same transaction.
   */
  async insert(run: Run, audit?: AuditEntry): Promise<boolean> {
    try {
      await writeAudited(
        this.store.db,
        (db) => db.insertInto('runs').values(runRow(run)).execute(),
        audit === undefined ? undefined : () => audit,
      );
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** The run of one occurrence, if there is one (the unique key of decisions §4). */
  async forOccurrence(
    key: { tenant: string; project: string; name: string },
    scheduledFor: number,
  ): Promise<Run | undefined> {
    const row = await this.store.db
      .selectFrom('runs')
      .selectAll()
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .where('scheduled_for', '=', scheduledFor)
      .executeTakeFirst();
    return row === undefined ? undefined : toRun(row);
  }

  /** The newest runs of one scheduler first, at most `limit`. */
  async listForScheduler(tenant: string, project: string, name: string, limit: number): Promise<Run[]> {
    return (await this.page({ tenant, project, name }, { limit })).map((r) => r.run);
  }

  /**
   * The runs of one scheduler by occurrence, the latest first (issue #23): at most `limit`, with
   * `before` (an occurrence instant, UTC ms) those due before it. An occurrence has one run
   * (decisions §4), so the last run's `scheduledFor` is the next page's `before`. Each run comes
   * with its process's status (null without a process). With `visibleToAgents`, only runs that were
   * not `hidden` when claimed (spec §10b).
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1; a store error.
   */
  async page(
    key: SchedulerKey,
    page: {
      readonly limit: number;
      readonly before?: number | undefined;
      readonly visibleToAgents?: boolean;
    },
  ): Promise<{ run: Run; processStatus: string | null }[]> {
    let query = this.store.db
      .selectFrom('runs')
      .leftJoin('processes', 'processes.id', 'runs.process_id')
      .selectAll('runs')
      .select('processes.status as process_status')
      .where('runs.tenant', '=', key.tenant)
      .where('runs.project', '=', key.project)
      .where('runs.name', '=', key.name);
    if (page.before !== undefined) query = query.where('runs.scheduled_for', '<', page.before);
    if (page.visibleToAgents) query = query.where('runs.lock_mode', '!=', 'hidden');
    const rows = await query.orderBy('runs.scheduled_for', 'desc').limit(checkLimit(page.limit)).execute();
    return rows.map((row) => ({ run: toRun(row), processStatus: row.process_status ?? null }));
  }

  /** The requests folded into each of the waiting runs `correlationIds` (see {@link foldedRuns}). */
  folded(correlationIds: readonly string[]): Promise<Map<string, FoldedRuns>> {
    return foldedRuns(this.store.db, correlationIds);
  }

  /** Runs in a state, oldest first (e.g. `claimed` ones left by a crash between claim and spawn). */
  async inState(state: Run['state'], limit: number): Promise<Run[]> {
    const rows = await this.store.db
      .selectFrom('runs')
      .selectAll()
      .where('state', '=', state)
      .orderBy('claimed_at')
      .limit(limit)
      .execute();
    return rows.map(toRun);
  }

  /**
   * Runs in `state` whose worker is not live by `liveness` as this statement runs (its lease
   * lapsed, or it never had a worker), at most `limit`, oldest first: the work a dead worker left
   * (decisions §5).
   */
  async orphaned(state: Run['state'], liveness: Liveness, limit: number): Promise<Run[]> {
    const rows = await this.store.db
      .selectFrom('runs')
      .selectAll()
      .where('state', '=', state)
      .where((eb) => eb.or([eb('worker_id', 'is', null), heldByDead('worker_id', liveness)]))
      .orderBy('claimed_at')
      .limit(limit)
      .execute();
    return rows.map(toRun);
  }

  /** Runs held by one worker in one of `states`, oldest first. */
  async heldBy(workerId: string, states: readonly Run['state'][], limit: number): Promise<Run[]> {
    const rows = await this.store.db
      .selectFrom('runs')
      .selectAll()
      .where('worker_id', '=', workerId)
      .where('state', 'in', [...states])
      .orderBy('claimed_at')
      .limit(limit)
      .execute();
    return rows.map(toRun);
  }

  /**
   * Moves a run in `state` from worker `from` to worker `to`; false when it was no longer
   * `from`'s (another worker took it first), so an orphaned run is taken over once.
   */
  async takeOver(
    correlationId: string,
    state: Run['state'],
    from: string | null,
    to: string,
  ): Promise<boolean> {
    const result = await this.store.db
      .updateTable('runs')
      .set({ worker_id: to })
      .where('correlation_id', '=', correlationId)
      .where('state', '=', state)
      .where((eb) => (from === null ? eb('worker_id', 'is', null) : eb('worker_id', '=', from)))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * {@link takeOver} for many runs in `state`, each from the worker it was read with (`workerId`,
   * null for none): one statement per such worker and {@link TAKE_OVER_CHUNK} runs, each row
   * still a compare-and-swap. Returns the correlation ids of the runs moved to `to`.
   */
  async takeOverMany(
    runs: readonly Pick<Run, 'correlationId' | 'workerId'>[],
    state: Run['state'],
    to: string,
  ): Promise<Set<string>> {
    const byWorker = new Map<string | null, string[]>();
    for (const run of runs) {
      const ids = byWorker.get(run.workerId) ?? [];
      ids.push(run.correlationId);
      byWorker.set(run.workerId, ids);
    }
    const taken = new Set<string>();
    for (const [from, ids] of byWorker) {
      for (let i = 0; i < ids.length; i += TAKE_OVER_CHUNK) {
        const rows = await this.store.db
          .updateTable('runs')
          .set({ worker_id: to })
          .where('correlation_id', 'in', ids.slice(i, i + TAKE_OVER_CHUNK))
          .where('state', '=', state)
          .where((eb) => (from === null ? eb('worker_id', 'is', null) : eb('worker_id', '=', from)))
          .returning('correlation_id')
          .execute();
        for (const row of rows) taken.add(row.correlation_id);
      }
    }
    return taken;
  }

  /**
   * Moves a run from `fromState` to new values; returns false when it was not in `fromState`
   * (someone else moved it) or, with `heldBy`, is not held by that worker — so each transition
   * happens once.
   */
  async transition(
    correlationId: string,
    fromState: Run['state'],
    values: Updateable<RunsTable>,
    heldBy?: string | null,
  ): Promise<boolean> {
    let query = this.store.db
      .updateTable('runs')
      .set(values)
      .where('correlation_id', '=', correlationId)
      .where('state', '=', fromState);
    // Only the worker holding the run's lease may move it (a run taken over is no longer the old worker's).
    if (heldBy !== undefined) {
      query = query.where((eb) =>
        heldBy === null ? eb('worker_id', 'is', null) : eb('worker_id', '=', heldBy),
      );
    }
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Ends many started runs in one transaction (issue #4: one write for every run that ended in
   * one turn of the event loop, not ten statements each): each run still `started` (or in its
   * `from` state), held by its `workerId` and at the attempt of its `fencingToken` (see
   * `src/store/fencing.ts`) becomes `ended`; and for those, and only those, its process gets its
   * final status, the END line is appended and the final run log written (created, or its pending
   * version replaced). A run another worker already ended, or started again, keeps that worker's
   * record, and so does its process; a run is never ended without its END line and final log
   * (spec §9a).
   *
   * @returns the correlation ids of the runs this call ended.
   */
  async endMany(ends: readonly RunEnd[]): Promise<Set<string>> {
    if (ends.length === 0) return new Set();
    return this.store.db.transaction().execute(async (trx) => {
      await planByKeys(trx, this.store.dialect);
      const runs = valuesList(
        this.store.dialect,
        ends.map(({ run, from }) => [
          run.correlationId,
          run.outcome,
          run.reason,
          run.endedAt,
          run.workerId,
          from ?? 'started',
          run.fencingToken,
        ]),
        ['text', 'text', 'text', 'bigint', 'text', 'text', 'bigint'],
      );
      const moved = await sql<{ correlation_id: string }>`
        update runs
        set state = 'ended', outcome = v.column2, reason = v.column3, ended_at = v.column4
        from ${runs} as v
        where runs.correlation_id = v.column1 and runs.state = v.column6
          and (runs.worker_id = v.column5 or (runs.worker_id is null and v.column5 is null))
          and runs.fencing_token is not distinct from v.column7
        returning runs.correlation_id as correlation_id`.execute(trx);
      const ended = new Set(moved.rows.map((r) => r.correlation_id));
      const mine = ends.filter(({ run }) => ended.has(run.correlationId));
      if (mine.length === 0) return ended;
      const finals = mine.flatMap(({ process: p }) =>
        p === undefined ? [] : [[p.id, p.status, p.endedAt, p.exitCode, p.reason, p.outputTail, p.errorTail]],
      );
      if (finals.length > 0) {
        const processes = valuesList(this.store.dialect, finals, [
          'text',
          'text',
          'bigint',
          'bigint',
          'text',
          'text',
          'text',
        ]);
        await sql`
          update processes
          set status = v.column2, ended_at = v.column3, exit_code = v.column4, reason = v.column5,
            output_tail = v.column6, error_tail = v.column7
          from ${processes} as v
          where processes.id = v.column1 and (processes.status || '') in (${sql.join(ACTIVE_STATUSES)})`.execute(
          trx,
        );
      }
      const { dialect } = this.store;
      await insertRows(
        trx,
        dialect,
        'feed',
        FEED_COLUMNS,
        mine.flatMap((e) => (e.opening === undefined ? [e.line] : [e.opening, e.line])),
      );
      await insertRows(
        trx,
        dialect,
        'documents',
        DOCUMENT_COLUMNS,
        mine.flatMap((e) => (e.log === undefined ? [] : [e.log])),
        sql`on conflict (tenant, project, path) do update set body = excluded.body,
          version = documents.version + 1, updated_at = excluded.updated_at,
          expires_at = excluded.expires_at`,
      );
      return ended;
    });
  }
}
