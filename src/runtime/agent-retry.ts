import { nextFireTime } from '../cron/index.js';
import { retryAt } from '../decisions/retry.js';
import type { FencedRun, Run } from '../runs/run.js';
import { endAgentRun } from './agent-end.js';
import type { DispatchContext } from './dispatch-context.js';
import { nextAttempt } from './next-attempt.js';
import { schedulerOfRun } from './run-scheduler.js';

/**
 * Retries an agent run whose attempt failed at its service (its `complete` said `failed`, or it
 * stayed silent past `heartbeatTimeout`; issue #25), as any failed run is retried (issue #22):
 * when this worker holds the run and its scheduler's `retry` leaves an attempt. The failed
 * attempt is taken off its service at once (no heartbeat check, stop or answer goes to it), and
 * in the background `nextAttempt` records its end, waits for the backoff and starts the next
 * attempt through the lane: a new delivery to the service with the same `Idempotency-Key`, the
 * next `attempt`, a new fencing token and run credential. If no attempt starts after all (the
 * lane refused it, the worker stopped), the run ends `failed` with the attempt's reason.
 *
 * @returns whether a retry was taken on (false: the caller ends the run).
 */
export async function retryHandedOff(ctx: DispatchContext, run: Run, reason: string): Promise<boolean> {
  const { rt } = ctx;
  if (run.state !== 'started' || run.workerId !== ctx.workerId) return false;
  if (run.processId === null || run.fencingToken === null || ctx.drain.draining.aborted) return false;
  const failed = run as FencedRun<string>;
  const scheduler = await schedulerOfRun(rt.repos, run).catch(() => undefined);
  if (scheduler === undefined) return false;
  const now = rt.clock.now();
  const { definition } = scheduler;
  const next =
    definition.trigger.kind === 'cron' ? nextFireTime(definition.trigger.cron, definition.zone, now) : null;
  if (retryAt(definition.retry, failed.attempt, now, next) === undefined) return false;
  await rt.repos.agentRuns.retrying(failed.correlationId, failed.fencingToken);
  // Carried by this dispatch until its next attempt ends: the reap leaves it alone meanwhile.
  ctx.inflight.add(failed.correlationId);
  ctx.track(
    nextAttempt(ctx, failed, scheduler, { status: 'failed', reason }, now)
      .then(async (ran) => {
        if (!ran) await endAgentRun(rt, failed, { status: 'failed', reason }, (r) => ctx.promoteWaiting(r));
      })
      .finally(() => ctx.inflight.delete(failed.correlationId)),
  );
  return true;
}
