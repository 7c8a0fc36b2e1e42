import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { RunBudget } from '../decisions/budget.js';
import { newProcessId } from '../runs/ids.js';
import { type Skip, skipOf } from '../runs/outcomes.js';
import type { PendingRun } from '../runs/run.js';
import { queueRun, skipRun, startRun } from '../runs/transitions.js';
import type { ScheduleBounds } from '../scheduler/definition.js';
import { admitInOrder, type FirstFire } from './admission-order.js';
import { budgetOf, overBudgetNotice } from './budget.js';
import type { DispatchContext } from './dispatch-context.js';
import { enterOne } from './enter.js';
import { oneShotRefusal, refuseOneShot } from './one-shot-refusal.js';
import { laneBounds } from './registrar.js';
import { openingOf, runParams } from './run-records.js';
import { scheduleWithdrawn } from './withdrawn.js';
import { runWorkflowTarget } from './workflow-target.js';

/**
 * Admits one held run through its scheduler's lane (spec §5) and acts on the decision: a start
 * goes to its target (a recipe's engine, or a workflow run: spec §4.2); a skip is recorded; a run
 * that waits has its log written, and a `cancelPrevious` stops the active run. A one-shot that
 * cannot start here is not consumed: released, and tried again later (spec §10a). Nothing is
 * admitted while this worker is fenced or after the drain's final stop: the run stays held.
 *
 * @throws a store error: the caller retries the spawn (see `dispatchWithRetry`).
 */
export async function admit(
  ctx: DispatchContext,
  held: PendingRun,
  scheduler: EffectiveScheduler,
): Promise<void> {
  const { rt } = ctx;
  const { repos, clock } = rt;
  const { definition } = scheduler;
  const refusal = oneShotRefusal(rt, held, scheduler);
  if (refusal !== undefined) {
    await refuseOneShot(ctx, held, scheduler, refusal, held.state);
    return;
  }
  const { target } = definition;
  // A workflow run has no scheduler session and no process of its own (spec §4.2).
  const workflow = target.kind === 'workflow';
  // No session for a run whose scheduler was deleted (its sessions archived) or disabled since.
  const session =
    workflow || (await scheduleWithdrawn(rt, held))
      ? undefined
      : await repos.sessions.systemSession(held.tenant, held.project, held.name, held.runAs, clock.now());
  const sessionId = session?.id ?? null;
  const processId = workflow ? null : newProcessId();
  // A recipe run's params (a workflow run's go to its workflow: `workflow-target.ts`).
  const params = workflow ? {} : runParams(scheduler);
  await ctx.ends.written([held]);
  // Fenced, or the drain's final stop came while this dispatch awaited the store: the run stays
  // as it is held, for this worker once it renews its lease, or for the next one.
  if (!ctx.lease.held || ctx.drain.stopped.aborted) return;
  // The project's run budget, read afresh for each admission (a changed setting applies at once).
  const budget = await budgetOf(ctx, held);
  let at = clock.now();
  // In the order of request and occurrence instants: an earlier manual fire is judged first.
  const admitted = await admitInOrder(
    (yielding) => {
      at = clock.now();
      return repos.lanes.admit({
        key: held,
        correlationId: held.correlationId,
        workerId: held.workerId,
        policy: definition.overlap,
        oneShot: definition.trigger.kind === 'at',
        trigger: held.trigger,
        scheduledFor: held.scheduledFor,
        yielding: yielding && !ctx.drain.draining.aborted,
        bounds: laneBounds(definition),
        budget,
        budgetNotice: budget === undefined ? undefined : overBudgetNotice(held, budget, at),
        start: { sessionId, processId, at },
        // A recipe run's process and START line come with its start (issue #20).
        opening:
          processId === null || session === undefined
            ? undefined
            : openingOf(startRun(held, { sessionId: session.id, processId, at }), scheduler, params, 'ready'),
      });
    },
    (first) => judgeFirst(ctx, first, scheduler),
  );
  ctx.judgements.judged(held.correlationId);
  const { decision, active } = admitted;
  // Not started, and recorded so: its overlap policy (spec §5), its scheduler deleted or disabled
  // while it was claimed ahead or waited in the queue (issue #20), its bounds or its project's
  // budget (issue #22; the lane told the run's user of a budget's refusal, once per window).
  const skip = skipOf(decision);
  if (skip !== undefined) {
    const skipped = skipRun(held, skip, at);
    await ctx.recorder.recordSkipped(
      // Folded into the lane's waiting run: it says which (issue #23).
      decision === 'consolidate' ? { ...skipped, foldedInto: admitted.waiting ?? null } : skipped,
      scheduler,
      limitOf(skip, definition.bounds, budget),
    );
    // The lane is as free as it was: the backfill queue's next occurrence has its turn.
    if (held.trigger === 'backfill') await ctx.promoteWaiting(held, scheduler);
    return;
  }
  // A backfill occurrence whose turn has not come stays queued; if the active run it waited for
  // ended between the admission and now, the turn is now. Held for another reason (the budget, a
  // run waiting before it), a later end or reap gives it its turn: no promotion here.
  if (decision === 'hold') {
    if (active !== undefined) await promoteIfEnded(ctx, active.correlationId, held, scheduler);
    return;
  }
  if (admitted.decision === 'start') {
    const { attempt } = admitted;
    if (target.kind === 'workflow')
      await runWorkflowTarget(
        ctx,
        startRun(held, { sessionId, processId: null, at }, attempt),
        scheduler,
        target.workflow,
      );
    else if (processId !== null) {
      // This dispatch lasts until the run's end, whose failure its caller handles (`dispatchWithRetry`).
      await enterOne(ctx, startRun(held, { sessionId, processId, at }, attempt), scheduler, params, at);
    }
    return;
  }
  if (decision !== 'queue' && decision !== 'cancel') return;
  await ctx.recorder.writeRunLog(queueRun(held, at, active?.correlationId ?? null), undefined, scheduler);
  if (decision === 'cancel' && active?.processId) ctx.processes.stop(active.processId, 'scheduler-overlap');
  // The active run is a workflow run: its running step is stopped, wherever it runs.
  if (decision === 'cancel' && active !== undefined && active.processId === null)
    await repos.workflowRuns.requestStopFor(active.correlationId, at);
  rt.log.info(
    { scheduler: held.name, correlationId: held.correlationId, decision },
    'run waiting for its lane',
  );
  // The active run may have ended between the admission and now: then this one's turn is now.
  await promoteIfEnded(ctx, active?.correlationId, held, scheduler);
}

/** Gives the lane to its next run unless the lane's active run (`activeId`) is still started. */
async function promoteIfEnded(
  ctx: DispatchContext,
  activeId: string | undefined,
  held: PendingRun,
  scheduler: EffectiveScheduler,
): Promise<void> {
  const active = activeId === undefined ? undefined : await ctx.rt.repos.runs.get(activeId);
  if (active?.state !== 'started') await ctx.promoteWaiting(held, scheduler);
}

/**
 * Has a manual fire requested before the run being admitted judged first (issue #20): one
 * dispatched here is waited for (until its lane judged it); any other is taken over (a
 * compare-and-swap: a worker that held it finds it gone) and dispatched here.
 */
async function judgeFirst(
  ctx: DispatchContext,
  first: FirstFire,
  scheduler: EffectiveScheduler,
): Promise<void> {
  if (ctx.inflight.has(first.correlationId)) return ctx.judgements.of(first.correlationId);
  const { runs } = ctx.rt.repos;
  if (ctx.drain.draining.aborted) return;
  if (!(await runs.takeOver(first.correlationId, 'claimed', first.workerId, ctx.workerId))) return;
  const fire = await runs.get(first.correlationId);
  if (fire?.state !== 'claimed') return;
  ctx.start(fire, scheduler);
  await ctx.judgements.of(fire.correlationId);
}

/**
 * What a `skipped_bounds` or `skipped_budget` line says besides its reason: the bound that refused
 * the run (UTC ms, or the count), or the budget's limit.
 */
function limitOf(skip: Skip, bounds: ScheduleBounds, budget: RunBudget | undefined): Record<string, unknown> {
  switch (skip.reason) {
    case 'runs-per-hour':
      return { runsPerHour: budget?.runsPerHour };
    case 'runs-per-day':
      return { runsPerDay: budget?.runsPerDay };
    case 'before-start':
      return { startAt: bounds.startAt };
    case 'after-end':
      return { endAt: bounds.endAt };
    case 'max-runs':
      return { maxRuns: bounds.maxRuns };
    default:
      return {};
  }
}
