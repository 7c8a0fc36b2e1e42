import type { RetryPolicy } from '../scheduler/definition.js';
import type { SchedulerStanding } from './admission.js';
import type { BudgetRefusal } from './budget.js';

/**
 * When a run's next attempt starts after attempt `failed` (1 for the first) ended failed at
 * `failedAt`, pure (issue #22 retries): `backoff · 2^(failed−1)` later, but never later than the
 * scheduler's next occurrence after `failedAt` (`nextOccurrence`, UTC ms; null for a one-shot or a
 * cron that fires no more). Undefined when `policy` allows no further attempt (or there is none).
 * Instants and the result are UTC epoch ms.
 */
export function retryAt(
  policy: RetryPolicy | undefined,
  failed: number,
  failedAt: number,
  nextOccurrence: number | null,
): number | undefined {
  if (policy === undefined || failed >= policy.attempts) return undefined;
  const wait = policy.backoffMs * 2 ** (failed - 1);
  const at = failedAt + wait;
  return nextOccurrence === null || nextOccurrence <= failedAt ? at : Math.min(at, nextOccurrence);
}

/**
 * The admission of a retry, pure, in the admission order of every start (issue #22): a retry is
 * the same run, which holds its lane from its first attempt to its end, so bounds (it started
 * already) and the overlap policy (it is the lane's active run) have nothing to say of it; what
 * changed meanwhile does — its scheduler deleted or paused, a stop asked of the failed attempt's
 * process (a person's, or a `cancelPrevious` occurrence's), or its project's run budget spent
 * (each attempt counts). `start`, or why no further attempt starts: the run then ends with its
 * last attempt's outcome.
 */
export function decideRetry(
  standing: SchedulerStanding,
  stopRequested: boolean,
  overBudget: BudgetRefusal | undefined,
): 'start' | 'deleted' | 'disabled' | 'stopped' | BudgetRefusal {
  if (standing !== 'present') return standing;
  if (stopRequested) return 'stopped';
  return overBudget ?? 'start';
}
