import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { EngineResult } from '../engines/engine.js';
import { engineOutcome } from '../runs/outcomes.js';
import type { FencedRun } from '../runs/run.js';
import { endRun } from '../runs/transitions.js';
import { formatInstant } from '../time/instant.js';
import type { DispatchContext } from './dispatch-context.js';
import { callEngine } from './engine-call.js';
import { SimulatedCrash } from './faults.js';
import { releasedUnentered } from './one-shot-refusal.js';
import { oneShotUsedUp, releaseOneShotRun } from './one-shot-start.js';
import { endStarted } from './run-ends.js';
import { runParams } from './run-records.js';

/**
 * A recipe run started alone (by its admission): its pending run log, then its engine, then
 * {@link launched}. Its process and START line came with its start, under its lane's lock: a
 * `cancelPrevious` run admitted since found the process and marked its stop (applied when the
 * engine is entered).
 */
export async function launch(
  ctx: DispatchContext,
  started: FencedRun<string>,
  scheduler: EffectiveScheduler,
): Promise<void> {
  const { repos } = ctx.rt;
  await ctx.recorder.writeRunLog(started, await repos.processes.get(started.processId), scheduler);
  let entry: (entered: boolean) => void = () => {};
  const entered = new Promise<boolean>((resolve) => {
    entry = resolve;
  });
  const running = callEngine(ctx, started, scheduler, runParams(scheduler), undefined, entry);
  await launched(ctx, started, scheduler, running, undefined, entered);
}

/**
 * A started run from its engine's call on: one-shot bookkeeping once `entered` says the engine
 * was entered (spec §10a: spawn, then the marker), and the end (process, run, END line, run log,
 * the lane's next run). After the entry only the engine's return ends the run: a store error in
 * the bookkeeping is logged and left to the next refresh, which heals a started one-shot. A
 * one-shot that never entered its engine for this worker's reasons (see `releasedUnentered`, or
 * a store error before the entry) is released, not used up. A batch start's process row and
 * START line are written meanwhile by `recorded`.
 */
export async function launched(
  ctx: DispatchContext,
  started: FencedRun<string>,
  scheduler: EffectiveScheduler,
  running: Promise<EngineResult>,
  recorded?: Promise<unknown>,
  entered: Promise<boolean> = Promise.resolve(true),
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
  const endedAt = clock.now();
  const run = endRun(started, engineOutcome(result.status), result.reason ?? null, endedAt);
  await endStarted(ctx, {
    run,
    scheduler,
    record: () => ({ run, scheduler, result }),
    before: async () => {
      await ctx.faults.beforeEnd?.(run);
      // Its process row and START line first (a batch writes them while the engines run).
      await recorded;
    },
    logged: { processId, durationMs: endedAt - startedAt },
    promote: definition.overlap !== 'skip',
  });
}
