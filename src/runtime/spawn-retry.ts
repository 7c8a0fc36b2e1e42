import type { EffectiveScheduler } from '../catalog/catalog.js';
import { isRefusal } from '../errors/index.js';
import { EndReason } from '../runs/outcomes.js';
import type { PendingRun } from '../runs/run.js';
import type { Run } from '../store/runs.js';
import { sleep } from '../time/sleep.js';
import { admit } from './admission.js';
import type { DispatchContext } from './dispatch-context.js';
import { endFailedAndPromote } from './failed-end.js';
import { SimulatedCrash } from './faults.js';
import { fireInstantOf } from './fire-instant.js';
import { releaseOneShotRun } from './one-shot-start.js';

/**
 * Dispatches a run at its instant; a spawn that fails (the store or the recipe lookup failing,
 * say) is retried with exponential backoff while the run is still claimed by this worker (spec
 * §10a: a failed spawn sets no marker and is retried). A run that took its lane and then failed is
 * ended failed; a one-shot whose process never ran is released instead. A drain cuts the backoff
 * short and leaves the run claimed for the next worker.
 */
export async function dispatchWithRetry(
  ctx: DispatchContext,
  run: PendingRun,
  scheduler: EffectiveScheduler,
): Promise<void> {
  const { rt } = ctx;
  const { draining } = ctx.drain;
  // A run claimed ahead of its occurrence starts at it (with its jitter), not before. (A manual
  // fire's scheduledFor is its occurrence key, which may lie 1 ms ahead of the clock: it starts at once.)
  if (run.trigger !== 'manual' && !(await ctx.drain.until(fireInstantOf(run, scheduler)))) return;
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.faults.beforeSpawn?.(run);
      await admit(ctx, run, scheduler);
      return;
    } catch (error) {
      if (error instanceof SimulatedCrash) throw error;
      // A run yielding to this one goes on rather than wait out the backoff.
      ctx.judgements.judged(run.correlationId);
      rt.log.warn({ err: error, correlationId: run.correlationId, attempt: attempt + 1 }, 'spawn failed');
      let current: Run | undefined;
      try {
        current = await rt.repos.runs.get(run.correlationId);
      } catch (readError) {
        if (readError instanceof SimulatedCrash || isRefusal(readError)) throw readError;
        // The store is out of reach: the run stays as it is held, and the worker's reap recovers it.
        rt.log.warn(
          { err: readError, correlationId: run.correlationId },
          'could not read a run whose spawn failed; the next pass recovers it',
        );
        return;
      }
      if (current?.workerId !== ctx.workerId) return;
      if (current.state === 'claimed' && attempt < ctx.retry.attempts) {
        if (draining.aborted) return;
        const delay = Math.min(ctx.retry.baseMs * 2 ** attempt, ctx.retry.maxMs);
        await sleep(delay, draining);
        if (draining.aborted) return;
        continue;
      }
      // A one-shot whose process never ran is not used up (spec §10a): released, tried again;
      // when the store fails that too, the worker's reap finds it as it is.
      if (current.state === 'started') {
        const released = await releaseOneShotRun(
          ctx,
          current,
          scheduler,
          EndReason.SPAWN_FAILED,
          false,
        ).catch((releaseError: unknown) => {
          if (releaseError instanceof SimulatedCrash) throw releaseError;
          rt.log.warn(
            { err: releaseError, correlationId: run.correlationId },
            'could not release a one-shot',
          );
          return undefined;
        });
        if (released !== false) return;
      }
      // It cannot be spawned (retries spent, or it failed half-way after taking the lane): ended
      // visibly, so that its lane is free and its user hears of it. The reason is fixed text: the
      // underlying error (maybe a driver's) goes only to the server log.
      if (current.state === 'claimed' || current.state === 'queued' || current.state === 'started') {
        await endFailedAndPromote(ctx, current, {
          reason: EndReason.SPAWN_FAILED,
          from: current.state,
          at: rt.clock.now(),
          workerId: ctx.workerId,
        });
      }
      return;
    }
  }
}
