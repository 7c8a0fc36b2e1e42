import type { BoundsRefusal } from './bounds.js';
import type { BudgetRefusal } from './budget.js';
import { decideOverlap, type OverlapDecision, type OverlapSituation } from './overlap.js';

/**
 * Where a run's scheduler stands at the instant its lane admits the run (issue #20): still there,
 * deleted since the run was claimed or queued (its schedule state, or for a manual fire its
 * document, is gone), or disabled since (`enabled: false`).
 */
export type SchedulerStanding = 'present' | 'deleted' | 'disabled';

/** What the admission of a run looks at: the overlap situation, and what changed since its claim. */
export interface AdmissionSituation extends OverlapSituation {
  readonly trigger: 'cron' | 'at' | 'manual' | 'backfill';
  readonly standing: SchedulerStanding;
  /**
   * A backfill run of the same scheduler for an older occurrence is still queued: a backfill runs
   * its occurrences oldest first.
   */
  readonly earlierBackfill: boolean;
  /**
   * A manual fire of the same scheduler, requested before this run's occurrence, is still claimed
   * (no lane has judged it yet).
   */
  readonly earlierManualFire: boolean;
  /** What the scheduler's bounds say of the run (`boundsRefusal`); undefined when they let it start. */
  readonly outOfBounds: BoundsRefusal | undefined;
  /** What the project's run budget says of the run (`budgetRefusal`); undefined when it may start. */
  readonly overBudget: BudgetRefusal | undefined;
}

/**
 * The admission of a run: an overlap decision (spec §5), or
 * - `deleted` / `disabled`: the scheduler was deleted or disabled while the run was claimed ahead
 *   of its instant or waiting in its queue: it is not started, and recorded skipped
 *   ({@link WITHDRAWN});
 * - a {@link BoundsRefusal}: the run's instant is before `startAt` or after `endAt`, or the
 *   scheduler started `maxRuns` runs already: not started, recorded `skipped_bounds`;
 * - a {@link BudgetRefusal}: its project started as many runs as its budget allows in the rolling
 *   hour or day: not started, recorded `skipped_budget`;
 * - `yield`: an earlier manual fire is judged first, and this run after it, so that a fire is
 *   judged in the order of the instants it was requested at and the occurrences are due at,
 *   whichever path recorded it;
 * - `hold`: a backfill run whose turn has not come (its lane has an active or a waiting run, or
 *   an older backfill occurrence is queued), or that its project's run budget has no room for
 *   yet: it stays in its lane's backfill queue, unchanged, and is looked at again.
 */
export type AdmissionDecision =
  | OverlapDecision
  | 'deleted'
  | 'disabled'
  | 'yield'
  | 'hold'
  | BoundsRefusal
  | BudgetRefusal;

/** The outcome and reason of a run skipped because its scheduler was deleted or disabled. */
export const WITHDRAWN = {
  deleted: { outcome: 'skipped_deleted', reason: 'scheduler-deleted' },
  disabled: { outcome: 'skipped_disabled', reason: 'scheduler-disabled' },
} as const;

/** The outcome and reason of a run its scheduler's bounds refused (issue #22). */
export const OUT_OF_BOUNDS = {
  'before-start': { outcome: 'skipped_bounds', reason: 'before-start' },
  'after-end': { outcome: 'skipped_bounds', reason: 'after-end' },
  'max-runs': { outcome: 'skipped_bounds', reason: 'max-runs' },
} as const;

/** The outcome and reason of a run its project's run budget refused (issue #22). */
export const OVER_BUDGET = {
  'runs-per-hour': { outcome: 'skipped_budget', reason: 'runs-per-hour' },
  'runs-per-day': { outcome: 'skipped_budget', reason: 'runs-per-day' },
} as const;

/**
 * Decides the admission of a run, pure, in the one admission order of every start (issue #22):
 * a deleted scheduler starts nothing; a scheduled run yields to an earlier manual fire (judged
 * first, so that what this run is judged against includes it); a backfill run waits for its turn
 * (its backfill queue's oldest, in a free lane); then the refusals in turn — bounds, pause (a
 * disabled scheduler starts no scheduled or backfill run, while a manual fire, which the service
 * refuses while paused, bypasses the schedule), the project's run budget — and the overlap policy
 * last. A backfill run meets no overlap policy: its turn comes only when its lane is free, and the
 * runs due meanwhile meet theirs against it.
 */
export function decideAdmission(s: AdmissionSituation): AdmissionDecision {
  if (s.standing === 'deleted') return 'deleted';
  const scheduled = s.trigger !== 'manual';
  const backfill = s.trigger === 'backfill';
  if (scheduled && s.earlierManualFire) return 'yield';
  if (backfill && (s.active || s.waiting || s.earlierBackfill)) return 'hold';
  if (s.outOfBounds !== undefined) return s.outOfBounds;
  if (scheduled && s.standing === 'disabled') return 'disabled';
  // A backfill paces itself within the budget: its occurrence waits for room, not skipped.
  if (s.overBudget !== undefined) return backfill ? 'hold' : s.overBudget;
  return backfill ? 'start' : decideOverlap(s);
}
