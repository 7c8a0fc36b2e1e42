import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { EngineResult } from '../engines/engine.js';
import { engineOutcome } from '../runs/outcomes.js';
import type { FencedRun } from '../runs/run.js';
import { endRun } from '../runs/transitions.js';
import { formatInstant } from '../time/instant.js';
import type { DispatchContext } from './dispatch-context.js';
import { SimulatedCrash } from './faults.js';
import { releasedUnentered } from './one-shot-refusal.js';
import { oneShotUsedUp, releaseOneShotRun } from './one-shot-start.js';
import { endStarted } from './run-ends.js';

/**
 * A started run from its engine's call on: one-shot bookkeeping once `entered` says the engine
 * was entered (spec §10a: spawn, then the marker), and the end (process, run, END line, run log,
 * the lane's next run). After the entry only the engine's return ends the run: a store error in
 * the bookkeeping is logged and left to the next refresh, which heals a started one-shot. A
 * one-shot that never entered its engine for this worker's reasons (see `releasedUnentered`, or
 * a store error before the entry) is released, not used up. Its end waits for `recorded`, the
 * pending run log written meanwhile (`enter.ts`).
 */
export async function launched(
  ctx: DispatchContext,
  started: FencedRun<string>,
  scheduler: EffectiveScheduler,
  running: Promise<EngineResult>,
  recorded: Promise<unknown>,
  entered: Promise<boolean>,
): Promise<void> {
  const { clock, log } = ctx.rt;
  const { definition } = scheduler;
  const { processId, startedAt } = started;
  ctx.rt.metrics?.lateness.observe({ trigger: started.trigger }, (startedAt - started.scheduledFor) / 1000);
  log.info(
    {
      scheduler: started.name,
      correlationId: started.correlationId,
      processId,
      scheduledFor: formatInstant(started.scheduledFor),
      coalesced: started.coalesced,
    },
    'run started',
  );
  const oneShot = definition.trigger.kind === 'at';
  if (oneShot && (await entered)) await oneShotUsedUp(ctx, started, scheduler);

  let result: EngineResult;
  try {
    result = await running;
  } catch (error) {
    // The store failed its spawn before the engine's entry (spec §10a: no marker, it remains).
    if (error instanceof SimulatedCrash || !oneShot || (await entered)) throw error;
    await releaseOneShotRun(ctx, started, scheduler, 'spawn-failed', true);
    return;
  }
  if (oneShot && !(await entered) && result.reason !== undefined && releasedUnentered(result.reason)) {
    await releaseOneShotRun(ctx, started, scheduler, result.reason, true);
    return;
  }
  // Handed to its agent service (issue #25): the run stays active, owned by the store; a callback
  // or its silence ends it (`agent-end.ts`), on whichever server or worker hears of it.
  if (result.status === 'accepted') {
    log.info(
      {
        scheduler: started.name,
        correlationId: started.correlationId,
        processId,
        reference: result.reference,
      },
      'run handed to its agent service',
    );
    return;
  }
  const endedAt = clock.now();
  const run = endRun(started, engineOutcome(result.status), result.reason ?? null, endedAt);
  // A failed attempt goes to retry (issue #22): a next attempt that ran carries the run to its end.
  if (run.outcome === 'failed' && !oneShot && (await ctx.nextAttempt(started, scheduler, result, endedAt)))
    return;
  await endStarted(ctx, {
    run,
    scheduler,
    record: () => ({ run, scheduler, result }),
    before: async () => {
      await ctx.faults.beforeEnd?.(run);
      // Its pending run log first (written while the engine runs), so the final one replaces it.
      await recorded;
    },
    logged: { processId, durationMs: endedAt - startedAt },
    // A skip lane has no waiting run; a backfill's next occurrence follows its previous one. (One
    // held while a scheduled run was active gets its turn at the next reap: `Backfills.ready`.)
    promote: definition.overlap !== 'skip' || run.trigger === 'backfill',
  });
}
