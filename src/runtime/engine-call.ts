import { recipeOf } from '../catalog/catalog.js';
import { type EngineResult, runEngine } from '../engines/engine.js';
import { LEASE_LOST } from '../fencing/lease.js';
import { traceparentOf } from '../runs/trace.js';
import { fenceOf } from '../store/fencing.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import { type DispatchContext, persist } from './dispatch-context.js';
import type { Launching } from './enter.js';
import { stoppedBeforeEntry } from './final-stop.js';
import { openHandOff, recordAccepted } from './hand-off.js';

/**
 * Runs a started run's engine (a recipe target) and resolves to what it returned, or to why it was
 * not entered. Its process is registered here already (`controller`). A process written `ready`
 * (a run started one at a time: see `Launching.opened`) is moved to `running` first — one another
 * worker ended or released since is not started — and a stop requested before it was registered
 * here applies. `entry` is told once, at the engine's entry (true) or when the run ends without
 * entering it (false). Nothing is entered once the lease is lost, or once a stop was requested or
 * the drain's final stop came. An engine that hands its run to a service (issue #25) gets its
 * callback and run credential, recorded before its entry, and its `accepted` is recorded with
 * the service's reference before this resolves.
 */
export async function callEngine(
  ctx: DispatchContext,
  { run, scheduler, params, controller, opened }: Launching,
  entry: (entered: boolean) => void,
): Promise<EngineResult> {
  const { rt, processes, calls } = ctx;
  const { repos, clock } = rt;
  const { processId } = run;
  const recipe = recipeOf(scheduler);
  const engine = rt.engines.get(recipe.engine);
  if (engine === undefined) {
    processes.returned(processId);
    entry(false);
    return { status: 'failed', reason: `engine ${JSON.stringify(recipe.engine)} is not registered` };
  }
  try {
    if (opened === 'ready') {
      // Not ours any more (another worker ended the run since it was admitted): nothing starts.
      const ours = await repos.processes.transition(
        processId,
        ['ready'],
        { status: 'running', started_at: clock.now() },
        fenceOf(run),
      );
      if (!ours) controller.abort('worker-lost');
      // A stop requested before the process was registered here (cancelPrevious from another worker).
      const [requested] = await repos.processes.stopRequested([processId]);
      if (requested !== undefined) controller.abort(requested.stopReason ?? 'stopped');
    }
    // Checked in the same turn as the engine's entry: no process starts once the lease is lost.
    if (!ctx.lease.held) controller.abort(LEASE_LOST);
    // Stopped before its engine was entered (a final stop, a stop request): nothing starts.
    const stopped = stoppedBeforeEntry(controller.signal);
    if (stopped !== undefined) return stopped;
    // An engine that hands its run to a service gets its callback, recorded first (issue #25).
    const callback = engine.handsOff === true ? await openHandOff(rt, run, recipe) : undefined;
    // In flight from here until it returns; without a process group, only this thread can stop it.
    calls.enter(processId);
    const running = runEngine(engine, {
      processId,
      recipe,
      params,
      initialMessage: scheduler.definition.initialMessage,
      context: {
        tenant: run.tenant,
        project: run.project,
        scheduler: run.name,
        correlationId: run.correlationId,
        scheduledFor: run.scheduledFor,
        runAs: run.runAs,
        fencingToken: run.fencingToken,
        attempt: run.attempt,
        // The span recorded when the run ends (by whichever worker) has these ids (issue #26 item 3).
        ...(rt.tracer === undefined ? {} : { traceparent: traceparentOf(run.correlationId) }),
      },
      signal: controller.signal,
      report: (status) => {
        ctx.track(
          repos.processes.transition(processId, ACTIVE_STATUSES, { status }, fenceOf(run)).then(() => {}),
        );
      },
      // The output so far, for a running run's page (issue #23); its end writes the final tails.
      progress: (tails) => {
        ctx.track(
          repos.processes
            .transition(
              processId,
              ACTIVE_STATUSES,
              { output_tail: tails.output, error_tail: tails.errorOutput },
              fenceOf(run),
            )
            // Best effort: the next report, or the run's end, writes the output again.
            .then(
              () => {},
              (error: unknown) =>
                rt.log.warn({ err: error, processId }, 'could not record the output so far'),
            ),
        );
      },
      spawned: (pgid) => calls.spawned(processId, pgid),
      ...(callback === undefined ? {} : { callback }),
    });
    entry(true);
    ctx.faults.afterStart?.(run);
    const result = await running;
    // Handed off: the run is the store's from here (decisions §5), and its silence counts from now.
    if (result.status === 'accepted')
      await persist(ctx, 'the hand-off of an agent run', () => recordAccepted(rt, run, result));
    return result;
  } finally {
    entry(false);
    calls.returned(processId);
    processes.returned(processId);
  }
}
