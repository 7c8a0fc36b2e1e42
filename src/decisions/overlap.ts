import type { OverlapPolicy } from '../scheduler/definition.js';

/**
 * What to do with a run about to start, given the scheduler's overlap policy (spec §5):
 * - `start`: nothing active or waiting: take the lane;
 * - `skip`: policy `skip` and a run is active: not started (outcome `skipped_overlap`);
 * - `queue`: policy `queue` (or `cancelPrevious`) and nothing waiting yet: hold it as the one
 *   waiting run, started as soon as the active run ends;
 * - `consolidate`: a run is already waiting: this one is absorbed into it (outcome
 *   `skipped_overlap_queued`), so at most one waits per scheduler;
 * - `cancel`: policy `cancelPrevious`: stop the active run (reason `scheduler-overlap`), and hold
 *   this one as the waiting run that starts when the stop has taken effect.
 */
export type OverlapDecision = 'start' | 'skip' | 'queue' | 'consolidate' | 'cancel';

/** What the decision looks at. */
export interface OverlapSituation {
  readonly policy: OverlapPolicy;
  /** A one-shot (`at:`) can fire once only: its overlap policy is parsed and ignored (spec §10a). */
  readonly oneShot: boolean;
  /** A run of the scheduler is active (its process is ready, running, paused, blocked or suspended). */
  readonly active: boolean;
  /** Another run of the scheduler is waiting for the lane. */
  readonly waiting: boolean;
}

/** The overlap decision of spec §5, pure: the same for a cron tick, a catch-up and a manual fire. */
export function decideOverlap(s: OverlapSituation): OverlapDecision {
  if (s.oneShot) return 'start';
  // A waiting run owns the next turn of the lane, even in the instant between two runs.
  const busy = s.active || s.waiting;
  if (!busy) return 'start';
  switch (s.policy) {
    case 'skip':
      return 'skip';
    case 'queue':
      return s.waiting ? 'consolidate' : 'queue';
    case 'cancelPrevious':
      return s.waiting ? 'consolidate' : 'cancel';
  }
}
