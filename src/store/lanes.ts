import { sql, type Transaction } from 'kysely';
import { decideAdmission } from '../decisions/admission.js';
import { boundsRefusal, maxRunsSpent } from '../decisions/bounds.js';
import { skipOf } from '../runs/outcomes.js';
import { takeFencingTokens, tokenOf } from './fencing.js';
import { startFreeLanes } from './lane-batch.js';
import { lockLane, notifyOnce, overBudget, schedulerStanding } from './lane-checks.js';
import {
  type Attempt,
  attemptOf,
  type LaneRequest,
  type LaneResult,
  type WorkflowStartRecord,
  writeOpenings,
} from './lane-records.js';
import { type RetryRequest, type RetryResult, retryInLane } from './lane-retry.js';
import type { Store } from './open.js';
import { runsStarted } from './runs-started.js';
import type { SchedulerKey } from './schedules.js';
import type { Database } from './schema.js';
import { asSubplan } from './subplan.js';

/*
 * The lanes of schedulers as a repository (`Lanes`): a run's admission one at a time, the batch
 * start (its statement in `src/store/lane-batch.ts`), and the lane's reads and writes after a
 * start: which attempts are still current, a workflow target's start record, the waiting runs.
 * What a lane takes and gives is in `src/store/lane-records.ts`.
 */

/**
 * The lane of a scheduler (spec §5, §6): one run active at a time, at most one waiting. Every
 * start of every source — tick, catch-up, manual fire, a waiting run's turn — goes through
 * {@link Lanes.admit}, which decides with the pure `decideAdmission` and applies the decision in
 * one transaction that holds the scheduler's lock, so no path can bypass the policy and two
 * workers cannot both start. Each start begins an attempt of the run with its fencing token,
 * taken under that lock (`src/store/fencing.ts`). The lane also looks, at the instant, at what
 * changed since the run was claimed: a scheduler deleted or disabled since starts nothing, and a
 * manual fire requested before the run's occurrence is judged before it (issue #20).
 */
export class Lanes {
  constructor(private readonly store: Store) {}

  /**
   * Admits one run held by `request.workerId` (`claimed` or `queued`) through its scheduler's lane,
   * in one transaction under the scheduler's lock: decides with `decideAdmission` against the runs
   * of the scheduler that are started, queued or claimed, and its schedule state, and applies the
   * decision — `start` moves the run to `started` with `request.start` (session, process id, the
   * instant in UTC ms) and a new attempt and fencing token, and writes its `opening` (process row,
   * START line); `queue`/`cancel` move it to `queued`; the overlap skips, `deleted` and `disabled`
   * move it to `skipped` with its outcome; `yield` moves nothing and names the earlier manual fire
   * to judge first. `lost`: the run was no longer this worker's to move.
   *
   * @throws a store error (`STORE_BUSY`, `STORE_UNAVAILABLE`): nothing was moved.
   */
  async admit(request: LaneRequest): Promise<LaneResult> {
    return this.store.db.transaction().execute(async (trx) => {
      const { key, budget } = request;
      // The project's lock before the scheduler's, always in this order: a budget's count of the
      // project's starts is then the one no other admission of the project changes meanwhile.
      await lockLane(trx, this.store.dialect, key, budget !== undefined);
      const others = await trx
        .selectFrom('runs')
        .select(['correlation_id', 'state', 'process_id', 'worker_id', 'trigger', 'scheduled_for'])
        .where('tenant', '=', key.tenant)
        .where('project', '=', key.project)
        .where('name', '=', key.name)
        .where('state', 'in', ['started', 'queued', 'claimed'])
        .where('correlation_id', '!=', request.correlationId)
        .execute();
      const activeRow = others.find((r) => r.state === 'started');
      const active =
        activeRow === undefined
          ? undefined
          : {
              correlationId: activeRow.correlation_id,
              processId: activeRow.process_id,
              workerId: activeRow.worker_id,
            };
      // The earliest manual fire requested before this run's occurrence that no lane judged yet.
      const first = others
        .filter(
          (r) =>
            r.state === 'claimed' && r.trigger === 'manual' && Number(r.scheduled_for) < request.scheduledFor,
        )
        .sort((a, b) => Number(a.scheduled_for) - Number(b.scheduled_for))[0];
      const { bounds } = request;
      // Counted under the lock: two workers' admissions never both start the last allowed run.
      const started = bounds?.limits.maxRuns === undefined ? 0 : await runsStarted(trx, key);
      // A backfill's queued occurrences are a queue of their own: not the lane's waiting run.
      const backfills = others.filter((r) => r.state === 'queued' && r.trigger === 'backfill');
      const waiting = others.find((r) => r.state === 'queued' && r.trigger !== 'backfill')?.correlation_id;
      const decision = decideAdmission({
        policy: request.policy,
        oneShot: request.oneShot,
        active: activeRow !== undefined,
        waiting: waiting !== undefined,
        earlierBackfill: backfills.some((r) => Number(r.scheduled_for) < request.scheduledFor),
        trigger: request.trigger,
        standing: await schedulerStanding(trx, key, request.trigger),
        earlierManualFire: first !== undefined && request.yielding !== false,
        outOfBounds:
          bounds === undefined ? undefined : boundsRefusal(bounds.limits, request.scheduledFor, started),
        overBudget: budget === undefined ? undefined : await overBudget(trx, key, budget, request.start.at),
      });
      if (decision === 'yield') {
        const next = first as (typeof others)[number];
        return { decision, active, first: { correlationId: next.correlation_id, workerId: next.worker_id } };
      }
      if (decision === 'hold') return { decision, active };
      // No recipe run starts without its process row and START line: one whose admission found
      // its scheduler withdrawn (and so prepared none) but that is startable now was re-enabled
      // meanwhile; this rolls back, and its retry admits it afresh.
      if (decision === 'start' && request.start.processId !== null && request.opening?.process === undefined)
        throw new Error(`run ${request.correlationId} would start without its process row`);
      const [token] = decision === 'start' ? await takeFencingTokens(trx, this.store.dialect, [key]) : [];
      const values =
        decision === 'start' && token !== undefined
          ? {
              state: 'started',
              session_id: request.start.sessionId,
              process_id: request.start.processId,
              started_at: request.start.at,
              attempt: sql<number>`attempt + 1`,
              fencing_token: token,
            }
          : decision === 'queue' || decision === 'cancel'
            ? // Behind whom and since when it waits (issue #23), kept through its start and end.
              {
                state: 'queued',
                queued_at: sql<number>`coalesce(queued_at, ${request.start.at})`,
                waiting_behind: active?.correlationId ?? null,
              }
            : {
                state: 'skipped',
                ...skipOf(decision),
                ended_at: request.start.at,
                ...(decision === 'consolidate' ? { folded_into: waiting ?? null } : {}),
              };
      const moved = await trx
        .updateTable('runs')
        .set(values)
        .where('correlation_id', '=', request.correlationId)
        .where('state', 'in', ['claimed', 'queued'])
        .where((eb) =>
          request.workerId === null ? eb('worker_id', 'is', null) : eb('worker_id', '=', request.workerId),
        )
        .returning(['attempt', 'fencing_token'])
        .executeTakeFirst();
      if (moved === undefined) return { decision: 'lost', active, waiting };
      if (bounds !== undefined && maxRunsSpent(bounds.limits, started + (decision === 'start' ? 1 : 0)))
        await this.#spend(trx, key, bounds.timing);
      if (decision === 'start' && request.opening !== undefined)
        await writeOpenings(trx, this.store.dialect, [request.opening]);
      if ((decision === 'runs-per-hour' || decision === 'runs-per-day') && request.budgetNotice !== undefined)
        await notifyOnce(trx, request.budgetNotice(decision));
      if (decision === 'cancel' && active?.processId) {
        await trx
          .updateTable('processes')
          .set({ stop_requested_at: request.start.at, stop_reason: 'scheduler-overlap' })
          .where('id', '=', active.processId)
          .where('stop_requested_at', 'is', null)
          .execute();
      }
      if (decision !== 'start') return { decision, active, waiting };
      return { decision, active, waiting, attempt: attemptOf(moved) };
    });
  }

  /** The next attempt of a started run whose attempt failed (issue #22): see {@link retryInLane}. */
  retry(request: RetryRequest): Promise<RetryResult> {
    return retryInLane(this.store, request);
  }

  /**
   * Starts the runs of a batch whose lane is free, in one transaction (issue #4: one round of
   * statements for a whole due second, not one transaction per run): the locks of every
   * scheduler in the batch, taken in key order (PostgreSQL), then one UPDATE that moves each run
   * this worker holds to `started` (its session, process id and instant set, and a new attempt with
   * its fencing token: `src/store/fencing.ts`) unless another run of its scheduler is started or
   * waiting, then the process rows and START lines of the runs it moved
   * ({@link LaneRequest.opening}). A free lane is `start` under every policy (the pure
   * `decideOverlap` with nothing active or waiting); a run whose lane is busy, the second run of one
   * scheduler in a batch, one this worker no longer holds, one whose scheduler lost its schedule
   * state or was disabled, and one with an earlier manual fire still claimed (issue #20) is left as
   * it was, `deferred`, for {@link admit} to decide and record one at a time.
   *
   * @param at the start instant (UTC ms) written for every run started.
   * @returns per request (same order): the attempt it began, or `deferred`.
   */
  async startMany(
    starts: readonly LaneRequest[],
    workerId: string,
    at: number,
  ): Promise<(Attempt | 'deferred')[]> {
    return startFreeLanes(this.store, starts, workerId, at);
  }

  /**
   * Of the given attempts (a run and the fencing token its start took), those that are still
   * their run's current attempt, `started`: one read for the lot. An attempt missing from the
   * answer lost its run to another worker (decisions §5 fencing).
   */
  async currentAttempts(
    attempts: readonly { readonly correlationId: string; readonly fencingToken: number | null }[],
  ): Promise<Set<string>> {
    if (attempts.length === 0) return new Set();
    const rows = await this.store.db
      .selectFrom('runs')
      .select(['correlation_id', 'fencing_token', 'state'])
      .where(
        'correlation_id',
        'in',
        attempts.map((a) => a.correlationId),
      )
      .execute();
    // The state compared here, not in the query: looked up by key alone, never through the index
    // of active runs, whose dead entries a top of the hour multiplies.
    const tokens = new Map(
      rows.filter((r) => r.state === 'started').map((r) => [r.correlation_id, tokenOf(r.fencing_token)]),
    );
    return new Set(
      attempts
        .filter((a) => tokens.has(a.correlationId) && tokens.get(a.correlationId) === a.fencingToken)
        .map((a) => a.correlationId),
    );
  }

  /**
   * Records the start of a workflow target's attempt once its workflow run started (its START line
   * names the workflow run, so it cannot come with the admission): the run's start instant (UTC ms)
   * and its START line, in one transaction, only while the run is still `started` at the attempt
   * of the given fencing token — a run another worker ended or started again meanwhile (this
   * worker's lease was taken over) keeps that worker's record.
   *
   * @returns whether this call recorded it (false: the run is no longer this attempt's).
   */
  async recordWorkflowStart(start: WorkflowStartRecord): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('runs')
        .set({ started_at: start.startedAt })
        .where('correlation_id', '=', start.correlationId)
        .where('state', '=', 'started')
        .where('fencing_token', '=', start.fencingToken)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await trx.insertInto('feed').values(start.line).execute();
      return true;
    });
  }

  /**
   * Waiting runs whose scheduler has no active run: their turn has come (after a restart, say).
   * Backfill queues are not among them (see `Backfills.ready`).
   */
  async waitingWithoutActive(limit: number): Promise<{ correlationId: string; workerId: string | null }[]> {
    const rows = await this.store.db
      .selectFrom('runs as w')
      .select(['w.correlation_id', 'w.worker_id'])
      .where('w.state', '=', 'queued')
      .where('w.trigger', '!=', 'backfill')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs as a')
              .select('a.correlation_id')
              .whereRef('a.tenant', '=', 'w.tenant')
              .whereRef('a.project', '=', 'w.project')
              .whereRef('a.name', '=', 'w.name')
              .where('a.state', '=', 'started')
              .$call(asSubplan(this.store.dialect)),
          ),
        ),
      )
      .orderBy('w.claimed_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ correlationId: r.correlation_id, workerId: r.worker_id }));
  }

  /**
   * The run whose turn comes next in a scheduler's lane, if any: its waiting run (spec §5), else
   * the oldest occurrence of its backfill queue (issue #22).
   */
  async waiting(key: SchedulerKey): Promise<{ correlationId: string; workerId: string | null } | undefined> {
    const row = await this.store.db
      .selectFrom('runs')
      .select(['correlation_id', 'worker_id'])
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .where('state', '=', 'queued')
      .orderBy(sql`case when trigger = 'backfill' then 1 else 0 end`)
      .orderBy('scheduled_for')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : { correlationId: row.correlation_id, workerId: row.worker_id };
  }

  // A scheduler whose `maxRuns` is spent waits for no occurrence: its claims stop here, not one
  // skipped run per occurrence. Only while its timing is the one the run was admitted under: a
  // refresh that raised `maxRuns` meanwhile registered it afresh.
  async #spend(trx: Transaction<Database>, key: SchedulerKey, timing: string): Promise<void> {
    await trx
      .updateTable('schedule_state')
      .set({ next_run_at: null })
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('name', '=', key.name)
      .where('timing', '=', timing)
      .execute();
  }
}
