import type { EffectiveScheduler } from '../catalog/catalog.js';
import { isPending } from '../runs/transitions.js';
import type { Run } from '../store/runs.js';
import type { DispatchContext } from './dispatch-context.js';
import { schedulerOfRun } from './run-scheduler.js';
import { skipQueuedOfDeleted } from './withdrawn.js';

/**
 * Gives the lane of a scheduler to its waiting run, if any (spec §5 `queue`, `cancelPrevious`),
 * else to the oldest occurrence of its backfill queue (issue #22): takes the run over from
 * whichever worker holds it (a compare-and-swap) and dispatches it here.
 * Nothing is promoted while draining or fenced. Returns whether a run was dispatched.
 *
 * @throws a store error met while loading its scheduler (when `scheduler` is not given): the run
 *   stays queued, held here, and the worker's next reap gives it its turn (issue #20).
 */
export async function promoteWaiting(
  ctx: DispatchContext,
  run: Pick<Run, 'tenant' | 'project' | 'name'>,
  scheduler?: EffectiveScheduler,
): Promise<boolean> {
  if (ctx.drain.draining.aborted || !ctx.lease.held) return false;
  const { repos } = ctx.rt;
  // A deleted scheduler's waiting run is recorded skipped, and the next in its lane (a backfill
  // queue's) is looked at in turn: nothing of a deleted scheduler is left waiting.
  for (;;) {
    const waiting = await repos.lanes.waiting(run);
    if (waiting === undefined) return false;
    if (!(await repos.runs.takeOver(waiting.correlationId, 'queued', waiting.workerId, ctx.workerId)))
      return false;
    const queued = await repos.runs.get(waiting.correlationId);
    const effective = scheduler ?? (await schedulerOfRun(repos, run));
    // Taken over as queued: anything else is another promotion's, started meanwhile.
    if (queued === undefined || !isPending(queued)) return false;
    if (effective !== undefined) {
      ctx.start(queued, effective);
      return true;
    }
    // Its scheduler was deleted while it waited: recorded skipped, not left waiting (issue #20).
    // One whose document is there but does not load stays, and so does the rest of its lane.
    if (!(await skipQueuedOfDeleted(ctx.rt, ctx.recorder, queued, ctx.workerId))) return false;
  }
}
