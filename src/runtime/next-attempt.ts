import type { EffectiveScheduler } from '../catalog/catalog.js';
import { nextFireTime } from '../cron/index.js';
import { retryAt } from '../decisions/retry.js';
import type { EngineResult } from '../engines/engine.js';
import { newProcessId } from '../runs/ids.js';
import type { FencedRun } from '../runs/run.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import { formatInstant } from '../time/instant.js';
import { budgetOf, overBudgetNotice } from './budget.js';
import { type DispatchContext, persist } from './dispatch-context.js';
import { enterOne } from './enter.js';
import { feedLineOf } from './recorder.js';
import { openingOf, runParams } from './run-records.js';
import { schedulerOfRun } from './run-scheduler.js';

/**
 * Retries a run whose attempt failed, when its scheduler's `retry` leaves an attempt (issue #22):
 * the failed attempt's end is recorded (its process `failed`, an END line saying when the next
 * attempt is due, and its run-log entry), the run keeps its lane while it waits (`retryAt`: the
 * backoff, doubled per attempt, never past the next occurrence), and the next attempt starts
 * through the lane (`Lanes.retry`: scheduler still there and not paused, no stop asked, budget not
 * spent) with its own process, START line and fencing token, and runs the scheduler as it is then.
 *
 * Returns true when a next attempt ran here (its end, or its own retry, ended the run); false
 * when none did — no attempt left, the drain or a lost lease during the wait, the lane's refusal,
 * the run no longer this attempt's — and the caller ends the run with the failed attempt.
 *
 * @throws a store error recording the attempt's end after the record retries are spent.
 */
export async function nextAttempt(
  ctx: DispatchContext,
  failed: FencedRun<string>,
  scheduler: EffectiveScheduler,
  result: EngineResult,
  endedAt: number,
): Promise<boolean> {
  const { definition } = scheduler;
  const { trigger } = definition;
  const next = trigger.kind === 'cron' ? nextFireTime(trigger.cron, definition.zone, endedAt) : null;
  const due = retryAt(definition.retry, failed.attempt, endedAt, next);
  const { sessionId } = failed;
  if (due === undefined || sessionId === null) return false;
  const { rt, recorder } = ctx;
  const reason = result.reason ?? null;
  await persist(ctx, 'the end of an attempt', async () => {
    await rt.repos.processes.transition(failed.processId, ACTIVE_STATUSES, {
      status: 'failed',
      ended_at: endedAt,
      reason,
      exit_code: result.exitCode ?? null,
      // An agent service's output came by its callbacks and is the process's already.
      ...(result.output === undefined ? {} : { output_tail: result.output }),
      error_tail: result.errorOutput ?? null,
    });
    await rt.repos.feed.append(
      feedLineOf(failed, 'END', endedAt, 'failed', {
        processId: failed.processId,
        attempt: failed.attempt,
        exitCode: result.exitCode ?? null,
        reason,
        retryAt: formatInstant(due),
      }),
    );
  });
  recorder.attemptFailed(failed.correlationId, {
    attempt: failed.attempt,
    processId: failed.processId,
    startedAt: failed.startedAt,
    endedAt,
    reason,
    retryAt: due,
  });
  rt.log.info(
    {
      scheduler: failed.name,
      correlationId: failed.correlationId,
      attempt: failed.attempt,
      retryAt: formatInstant(due),
    },
    'attempt failed; the run is retried',
  );
  if (!(await ctx.drain.until(due)) || ctx.drain.draining.aborted || !ctx.lease.held) return false;
  // The scheduler as it is now: the next attempt runs its recipe and params of now, and a retry
  // removed (or fewer attempts) meanwhile ends the run. A store error fails this dispatch.
  const current = await schedulerOfRun(rt.repos, failed);
  if (current === undefined || retryAt(current.definition.retry, failed.attempt, endedAt, next) === undefined)
    return false;
  const at = rt.clock.now();
  const processId = newProcessId();
  const params = runParams(current);
  const attempt = { ...failed, sessionId, processId, startedAt: at };
  const budget = await budgetOf(ctx, failed);
  const decided = await rt.repos.lanes.retry({
    key: failed,
    correlationId: failed.correlationId,
    trigger: failed.trigger,
    workerId: ctx.workerId,
    fencingToken: failed.fencingToken,
    failedAt: endedAt,
    failedReason: reason,
    processId,
    at,
    opening: openingOf(attempt, current, params, 'ready'),
    budget,
    budgetNotice: budget === undefined ? undefined : overBudgetNotice(failed, budget, at),
  });
  if (decided.decision !== 'start') {
    rt.log.info(
      { scheduler: failed.name, correlationId: failed.correlationId, decision: decided.decision },
      'no further attempt: the run ends with its failed one',
    );
    return false;
  }
  await enterOne(ctx, { ...attempt, ...decided.attempt }, current, params, at);
  return true;
}
