import { type AdmissionDecision, OUT_OF_BOUNDS, OVER_BUDGET, WITHDRAWN } from '../decisions/admission.js';

/**
 * The states of a run (spec §9a): `claimed` → (`queued` →) `started` → `ended`, or `skipped`.
 * `claimed`: a worker (or, for a manual fire, no worker yet) holds the occurrence; `queued`: it
 * waits for its scheduler's lane (overlap `queue` / `cancelPrevious`, spec §5); `started`: its
 * process (or workflow run) was started; `ended` and `skipped` are final.
 */
export const RunState = {
  CLAIMED: 'claimed',
  QUEUED: 'queued',
  STARTED: 'started',
  ENDED: 'ended',
  SKIPPED: 'skipped',
} as const;
export type RunState = (typeof RunState)[keyof typeof RunState];

/**
 * The outcome of a run (spec §9a), as recorded in `runs.outcome` and on its END or SKIPPED line.
 * `PENDING` until the run is final; a started run ends `COMPLETED`, `FAILED` or `CANCELLED`; a run
 * never started is skipped for its overlap policy (`SKIPPED_OVERLAP`, or `SKIPPED_OVERLAP_QUEUED`
 * when one already waits), a misfire (`SKIPPED_MISFIRE`, decisions §4), or its scheduler deleted
 * or disabled before its turn (`SKIPPED_DELETED`, `SKIPPED_DISABLED`, issue #20), its scheduler's
 * bounds (`SKIPPED_BOUNDS`, issue #22), its project's run budget (`SKIPPED_BUDGET`, issue #22),
 * or refused here as a one-shot (`REFUSED`).
 */
export const RunOutcome = {
  PENDING: 'pending',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  SKIPPED_OVERLAP: 'skipped_overlap',
  SKIPPED_OVERLAP_QUEUED: 'skipped_overlap_queued',
  SKIPPED_MISFIRE: 'skipped_misfire',
  SKIPPED_DELETED: 'skipped_deleted',
  SKIPPED_DISABLED: 'skipped_disabled',
  SKIPPED_BOUNDS: 'skipped_bounds',
  SKIPPED_BUDGET: 'skipped_budget',
  /**
   * A one-shot that cannot start on this worker (spec §10a): not consumed, released and tried
   * again; its SKIPPED line and run log say so.
   */
  REFUSED: 'refused',
} as const;
export type RunOutcome = (typeof RunOutcome)[keyof typeof RunOutcome];

/** The outcome of an ended run (one that was started, or was to be and failed before). */
export type EndOutcome = typeof RunOutcome.COMPLETED | typeof RunOutcome.FAILED | typeof RunOutcome.CANCELLED;

/** The outcome of a skipped run. */
export type SkipOutcome = Exclude<RunOutcome, EndOutcome | typeof RunOutcome.PENDING>;

/**
 * The fixed reasons Ursa itself records for a run's end or skip (`runs.reason`). A run's reason
 * may also be free text: what its engine said, or why a workflow could not start.
 */
export const EndReason = {
  /** Its worker's lease lapsed while it ran (decisions §5); or it lost its attempt to another worker. */
  WORKER_LOST: 'worker-lost',
  /** It could not be spawned: retries spent, or a failure after it took its lane (spec §10a). */
  SPAWN_FAILED: 'spawn-failed',
  /** Not started: its overlap policy said so (spec §5). */
  OVERLAP: 'overlap',
  /** Stopped by a `cancelPrevious` run of its scheduler (spec §5). */
  SCHEDULER_OVERLAP: 'scheduler-overlap',
  /** Its scheduler was deleted while it was claimed ahead or waiting (issue #20). */
  SCHEDULER_DELETED: 'scheduler-deleted',
  /** Its scheduler was disabled while it was claimed ahead or waiting (issue #20). */
  SCHEDULER_DISABLED: 'scheduler-disabled',
  /** Its scheduler's document was deleted or broken before the run could be resumed. */
  SCHEDULER_GONE: 'scheduler-gone',
  /** Its instant was before its scheduler's `startAt` (issue #22). */
  BEFORE_START: 'before-start',
  /** Its instant was after its scheduler's `endAt` (issue #22). */
  AFTER_END: 'after-end',
  /** Its scheduler had started `maxRuns` runs already (issue #22). */
  MAX_RUNS: 'max-runs',
  /** Its project had started `scheduler.budget.runsPerHour` runs in the rolling hour (issue #22). */
  RUNS_PER_HOUR: 'runs-per-hour',
  /** Its project had started `scheduler.budget.runsPerDay` runs in the rolling day (issue #22). */
  RUNS_PER_DAY: 'runs-per-day',
  /** Its agent service stayed silent longer than its recipe's `heartbeatTimeout` (issue #25). */
  HEARTBEAT_TIMEOUT: 'heartbeat-timeout',
} as const;
export type EndReason = (typeof EndReason)[keyof typeof EndReason];

/** How an engine's final status reads as a run's outcome (spec §9a). */
export function engineOutcome(status: 'done' | 'failed' | 'stopped'): EndOutcome {
  return ENGINE_OUTCOME[status];
}

const ENGINE_OUTCOME = {
  done: RunOutcome.COMPLETED,
  failed: RunOutcome.FAILED,
  stopped: RunOutcome.CANCELLED,
} as const;

/** How a workflow run's final status reads as the outcome of the scheduler run that held it (spec §4.2). */
export function workflowOutcome(status: string): EndOutcome {
  return status === 'completed'
    ? RunOutcome.COMPLETED
    : status === 'cancelled'
      ? RunOutcome.CANCELLED
      : RunOutcome.FAILED;
}

/** The outcome and reason of a run an admission did not start (spec §5, issue #20). */
export interface Skip {
  readonly outcome: SkipOutcome;
  readonly reason: EndReason;
}

/**
 * The outcome and reason of a run its admission skipped, pure: `skip` and `consolidate` for its
 * overlap policy (spec §5), `deleted` and `disabled` for its withdrawn scheduler (issue #20), the
 * bounds refusals for `skipped_bounds` and the budget's for `skipped_budget` (issue #22);
 * undefined for a decision that does not skip the run.
 */
export function skipOf(decision: AdmissionDecision | 'lost'): Skip | undefined {
  switch (decision) {
    case 'skip':
      return { outcome: RunOutcome.SKIPPED_OVERLAP, reason: EndReason.OVERLAP };
    case 'consolidate':
      return { outcome: RunOutcome.SKIPPED_OVERLAP_QUEUED, reason: EndReason.OVERLAP };
    case 'deleted':
    case 'disabled':
      return WITHDRAWN[decision];
    case 'before-start':
    case 'after-end':
    case 'max-runs':
      return OUT_OF_BOUNDS[decision];
    case 'runs-per-hour':
    case 'runs-per-day':
      return OVER_BUDGET[decision];
    default:
      return undefined;
  }
}
