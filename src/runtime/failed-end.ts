import type { Insertable } from 'kysely';
import type { EffectiveScheduler } from '../catalog/catalog.js';
import { failRun } from '../runs/transitions.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import type { FeedTable } from '../store/schema.js';
import type { DispatchContext } from './dispatch-context.js';

/** A run to end `failed` without its engine's word (see {@link endFailedAndPromote}). */
export interface FailedEnd {
  /** Its fixed reason (`spawn-failed`, `worker-lost`), or why its workflow could not start. */
  readonly reason: string | null;
  /** The state it must still be in to be ended here. */
  readonly from: Run['state'];
  /** The end instant, UTC ms. */
  readonly at: number;
  /** The worker that ends it, when not the one recorded on the run. */
  readonly workerId?: string;
  /** Its END line's details; default its process id and the reason. */
  readonly details?: Record<string, unknown>;
  /** A START line to write first, for a run recorded started without one (issue #20). */
  readonly opening?: Insertable<FeedTable> | undefined;
  /** Its scheduler, when known (else its waiting run's is loaded). */
  readonly scheduler?: EffectiveScheduler;
  /**
   * Takes a store error met giving the lane to the waiting run (it stays queued, and a later
   * pass gives it its turn); without it the error propagates.
   */
  readonly promotionFailed?: (error: unknown) => unknown;
}

/**
 * The recovery of a run that cannot end by its engine (its spawn failed, its worker was lost, its
 * workflow could not start): the run ends `failed` with its END line and final run log in one
 * transaction (spec §9a), its process is marked failed, and its lane goes to the run waiting
 * behind it (spec §5). A store that fails the end leaves the run as it is, for the worker's reap.
 *
 * @returns whether this call ended it (false: it is no longer in `from`, or no longer held).
 */
export async function endFailedAndPromote(
  ctx: Pick<DispatchContext, 'rt' | 'recorder' | 'promoteWaiting'>,
  run: Run,
  end: FailedEnd,
): Promise<boolean> {
  const { reason, at } = end;
  const ended = failRun(run, reason, at, end.workerId ?? run.workerId);
  const details = end.details ?? { processId: run.processId, reason };
  if (!(await ctx.recorder.endFailed(ended, end.from, details, end.opening, end.scheduler))) return false;
  if (run.processId !== null) {
    await ctx.rt.repos.processes.transition(run.processId, ACTIVE_STATUSES, {
      status: 'failed',
      ended_at: at,
      reason,
    });
  }
  const promoted = ctx.promoteWaiting(ended, end.scheduler);
  await (end.promotionFailed === undefined ? promoted : promoted.catch(end.promotionFailed));
  return true;
}
