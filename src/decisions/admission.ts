import { decideOverlap, type OverlapDecision, type OverlapSituation } from './overlap.js';

/**
 * Where a run's scheduler stands at the instant its lane admits the run (issue #20): still there,
 * deleted since the run was claimed or queued (its schedule state, or for a manual fire its
 * document, is gone), or disabled since (`enabled: false`).
 */
export type SchedulerStanding = 'present' | 'deleted' | 'disabled';

/** What the admission of a run looks at: the overlap situation, and what changed since its claim. */
export interface AdmissionSituation extends OverlapSituation {
  readonly trigger: 'cron' | 'at' | 'manual';
  readonly standing: SchedulerStanding;
  /**
   * A manual fire of the same scheduler, requested before this run's occurrence, is still claimed
   * (no lane has judged it yet).
   */
  readonly earlierManualFire: boolean;
}

/**
 * The admission of a run: an overlap decision (spec §5), or
 * - `deleted` / `disabled`: the scheduler was deleted or disabled while the run was claimed ahead
 *   of its instant or waiting in its queue: it is not started, and recorded skipped
 *   ({@link WITHDRAWN});
 * - `yield`: an earlier manual fire is judged first, and this run after it, so that a fire is
 *   judged in the order of the instants it was requested at and the occurrences are due at,
 *   whichever path recorded it.
 */
export type AdmissionDecision = OverlapDecision | 'deleted' | 'disabled' | 'yield';

/** The outcome and reason of a run skipped because its scheduler was deleted or disabled. */
export const WITHDRAWN = {
  deleted: { outcome: 'skipped_deleted', reason: 'scheduler-deleted' },
  disabled: { outcome: 'skipped_disabled', reason: 'scheduler-disabled' },
} as const;

/**
 * Decides the admission of a run, pure. A deleted scheduler starts nothing; a disabled one starts
 * no scheduled run, while a manual fire, which bypasses the schedule, still runs; a scheduled run
 * yields to an earlier manual fire; then the overlap policy decides.
 */
export function decideAdmission(s: AdmissionSituation): AdmissionDecision {
  if (s.standing === 'deleted') return 'deleted';
  if (s.trigger !== 'manual') {
    if (s.standing === 'disabled') return 'disabled';
    if (s.earlierManualFire) return 'yield';
  }
  return decideOverlap(s);
}
