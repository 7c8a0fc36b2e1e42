import type { EffectiveScheduler } from '../catalog/catalog.js';
import { isRefusal } from '../errors/index.js';
import { workflowOutcome } from '../runs/outcomes.js';
import type { FencedRun } from '../runs/run.js';
import { endRun } from '../runs/transitions.js';
import type { DispatchContext } from './dispatch-context.js';
import { endFailedAndPromote } from './failed-end.js';
import { SimulatedCrash } from './faults.js';
import { refuseOneShot } from './one-shot-refusal.js';
import { oneShotUsedUp } from './one-shot-start.js';
import { endStarted } from './run-ends.js';
import { workflowStartRecord } from './run-records.js';
import type { StartedWorkflow } from './workflow-runner.js';

/**
 * A started run of a workflow target (spec §4.2): starts the workflow run `workflow` with the
 * scheduler's params as its parameters (`initialMessage` is not used), writes the START line with
 * the `workflowRunId`, and holds the scheduler's lane until the workflow run ends; the END line
 * and the run log follow it to its end. Switched off by the operator (`workflows: false`), or a
 * workflow that cannot start: the run ends failed with the reason.
 */
export async function runWorkflowTarget(
  ctx: DispatchContext,
  started: FencedRun<null>,
  scheduler: EffectiveScheduler,
  workflow: string,
): Promise<void> {
  const { rt } = ctx;
  const { definition } = scheduler;
  let handle: StartedWorkflow | undefined;
  let refusal: string | undefined;
  if (rt.settings.workflowsEnabled === false) {
    refusal = 'workflows are switched off by the operator (workflows: false)';
  } else {
    try {
      handle = await ctx.workflows.start(
        started.tenant,
        started.project,
        workflow,
        definition.params,
        started.runAs,
        started.correlationId,
        { fencingToken: started.fencingToken, attempt: started.attempt },
      );
    } catch (error) {
      if (!isRefusal(error)) throw error;
      refusal = `workflow ${workflow} cannot start: ${error.message}`;
    }
  }
  if (handle === undefined) {
    if (started.trigger === 'at' && refusal !== undefined) {
      // Spec §10a: a one-shot whose workflow cannot start is not consumed either.
      if (await refuseOneShot(ctx, started, scheduler, refusal, 'started'))
        await ctx.promoteWaiting(started, scheduler);
      return;
    }
    const reason = refusal ?? null;
    await endFailedAndPromote(ctx, started, {
      reason,
      from: 'started',
      at: rt.clock.now(),
      details: { reason },
      scheduler,
    });
    return;
  }
  const workflowRunId = handle.run.id;
  let ours: boolean;
  try {
    ours = await rt.repos.lanes.recordWorkflowStart(workflowStartRecord(started, workflowRunId, workflow));
  } catch (error) {
    // Its start unrecorded, the run is ended by the caller: its workflow run ends first, so
    // that the lane is never free while a step of it still runs.
    ctx.workflows.stopLocal(workflowRunId, 'spawn-failed');
    await handle.done;
    throw error;
  }
  // Another worker took the run over since it was admitted: its workflow run must not go on.
  if (!ours) {
    ctx.workflows.stopLocal(workflowRunId, 'worker-lost');
    return;
  }
  // From here only the workflow run's end ends the run: the pending log is a courtesy.
  await ctx.recorder.writeRunLog(started, undefined, scheduler, handle.run).catch((error: unknown) => {
    if (error instanceof SimulatedCrash) throw error;
    rt.log.warn({ err: error, correlationId: started.correlationId }, 'could not write a pending run log');
  });
  rt.log.info(
    { scheduler: started.name, correlationId: started.correlationId, workflowRunId },
    'run started',
  );
  if (definition.trigger.kind === 'at') await oneShotUsedUp(ctx, started, scheduler);
  const { status, reason } = await handle.done;
  const run = endRun(started, workflowOutcome(status), reason, rt.clock.now());
  await endStarted(ctx, {
    run,
    scheduler,
    record: async () => ({
      run,
      scheduler,
      workflowRun: await rt.repos.workflowRuns.get(run.tenant, workflowRunId),
    }),
    logged: { workflowRunId },
    promote: true,
  });
}
