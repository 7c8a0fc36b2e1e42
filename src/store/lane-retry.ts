import { sql } from 'kysely';
import type { BudgetRefusal, RunBudget } from '../decisions/budget.js';
import { decideRetry } from '../decisions/retry.js';
import type { RunTrigger } from '../runs/run.js';
import { takeFencingTokens } from './fencing.js';
import type { NewInboxItem } from './inbox.js';
import { lockLane, notifyOnce, overBudget, schedulerStanding } from './lane-checks.js';
import { type Attempt, attemptOf, type Opening, writeOpenings } from './lane-records.js';
import type { Store } from './open.js';
import type { SchedulerKey } from './schedules.js';

/** The next attempt of a started run whose attempt failed (issue #22 retries). Instants are UTC ms. */
export interface RetryRequest {
  readonly key: SchedulerKey;
  readonly correlationId: string;
  readonly trigger: RunTrigger;
  /** The worker that ran the failed attempt and holds the run. */
  readonly workerId: string;
  /** The fencing token of the failed attempt: the retry starts only while the run is still at it. */
  readonly fencingToken: number;
  /** When the failed attempt ended, and why. */
  readonly failedAt: number;
  readonly failedReason: string | null;
  /** The process of the next attempt, and the instant it starts. */
  readonly processId: string;
  readonly at: number;
  /** Its process row and START line, written by the transaction that starts it. */
  readonly opening: Opening;
  readonly budget?: RunBudget | undefined;
  readonly budgetNotice?: ((refusal: BudgetRefusal) => NewInboxItem) | undefined;
}

/** What {@link retryInLane} did: a new attempt, why none, or `lost` (the run is not this attempt's any more). */
export type RetryResult =
  | { readonly decision: 'start'; readonly attempt: Attempt }
  | { readonly decision: 'deleted' | 'disabled' | 'stopped' | BudgetRefusal | 'lost' };

/**
 * Starts the next attempt of a run in its lane (issue #22 retries), in one transaction under the
 * locks of an admission (`lockLane`): decided by the pure `decideRetry` (the scheduler still there
 * and not paused, no stop asked of the failed attempt, the project's budget not spent: every
 * attempt counts), it records the failed
 * attempt in `run_attempts` and moves the run, still `started` and still holding its lane, to the
 * new attempt — its process, start instant, attempt number and a new fencing token — with the
 * attempt's opening (process row, START line). A budget's refusal tells the run's user once per
 * window, as an admission does.
 *
 * @throws a store error: nothing was moved.
 */
export function retryInLane(store: Store, request: RetryRequest): Promise<RetryResult> {
  return store.db.transaction().execute(async (trx): Promise<RetryResult> => {
    const { key, budget } = request;
    await lockLane(trx, store.dialect, key, budget !== undefined);
    const run = await trx
      .selectFrom('runs')
      .leftJoin('processes', 'processes.id', 'runs.process_id')
      .select(['runs.attempt', 'runs.process_id', 'runs.started_at', 'processes.stop_requested_at'])
      .where('runs.correlation_id', '=', request.correlationId)
      .where('runs.state', '=', 'started')
      .where('runs.worker_id', '=', request.workerId)
      .where('runs.fencing_token', '=', request.fencingToken)
      .executeTakeFirst();
    if (run === undefined || run.started_at === null) return { decision: 'lost' };
    const decision = decideRetry(
      // The schedule's state, whatever triggered the run: a pause ends the retries of a fire too.
      await schedulerStanding(trx, key, 'cron'),
      run.stop_requested_at !== null,
      budget === undefined ? undefined : await overBudget(trx, key, budget, request.at),
    );
    if (decision !== 'start') {
      if ((decision === 'runs-per-hour' || decision === 'runs-per-day') && request.budgetNotice !== undefined)
        await notifyOnce(trx, request.budgetNotice(decision));
      return { decision };
    }
    const [token] = await takeFencingTokens(trx, store.dialect, [key]);
    // A compare-and-swap on what was read: a reap ends a lost worker's run without this lock.
    const moved = await trx
      .updateTable('runs')
      .set({
        process_id: request.processId,
        started_at: request.at,
        attempt: sql<number>`attempt + 1`,
        fencing_token: token,
      })
      .where('correlation_id', '=', request.correlationId)
      .where('state', '=', 'started')
      .where('worker_id', '=', request.workerId)
      .where('fencing_token', '=', request.fencingToken)
      .returning(['attempt', 'fencing_token'])
      .executeTakeFirst();
    if (moved === undefined) return { decision: 'lost' };
    await trx
      .insertInto('run_attempts')
      .values({
        correlation_id: request.correlationId,
        attempt: Number(run.attempt),
        tenant: key.tenant,
        project: key.project,
        process_id: run.process_id,
        started_at: Number(run.started_at),
        ended_at: request.failedAt,
        reason: request.failedReason,
      })
      .execute();
    await writeOpenings(trx, store.dialect, [request.opening]);
    return { decision: 'start', attempt: attemptOf(moved) };
  });
}
