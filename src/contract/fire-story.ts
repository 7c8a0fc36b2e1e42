import type { RunDetail } from './index.js';

/**
 * What a manual fire did to the run it asked for (issue #23), pure: the lane's judgement as the
 * run's state, outcome and links show it. Said by `ursa fire` and by the web editor's Fire, so
 * both tell the same story; here, below every interface, with nothing but a type import, so the
 * web bundle takes it without zod or node code.
 */

/**
 * Whether the run's lane judged it: it started, ended or was skipped, or waits in its lane (a
 * queued run with `queuedAt`); a run no worker took yet is `queued` without it.
 */
export function judged(run: RunDetail): boolean {
  return run.state !== 'queued' || run.queuedAt !== null;
}

/** Why a fire did not start, in words, for the skip outcomes a manual fire can have. */
const NOT_STARTED: Readonly<Record<string, string>> = {
  skipped_overlap: 'a run is still active and the overlap policy is skip',
  skipped_bounds: 'the scheduler is outside its startAt/endAt/maxRuns bounds',
  skipped_budget: "the project's run budget has no room left",
  skipped_deleted: 'the scheduler was deleted',
  skipped_disabled: 'the scheduler was disabled',
};

/** One line: what became of run `run` of scheduler `name` after a fire. */
export function fireStory(name: string, run: RunDetail): string {
  const id = run.correlationId;
  switch (run.state) {
    case 'running':
    case 'paused':
    case 'blocked':
    case 'suspended':
      return `fired ${name}: ${id} started${run.processId === null ? '' : ` (process ${run.processId})`}`;
    case 'ended':
      return `fired ${name}: ${id} ran and ended ${run.outcome}${run.reason === null ? '' : ` (${run.reason})`}`;
    case 'skipped':
      if (run.foldedInto !== null)
        return `fired ${name}: folded into ${run.foldedInto}, which already waits for its turn; this fire adds no run`;
      return `fired ${name}: ${id} did not start: ${NOT_STARTED[run.outcome] ?? run.outcome}`;
    case 'queued':
      if (run.queuedAt === null) return `fired ${name}: ${id} is requested; no worker has taken it yet`;
      return run.waitingBehind === null
        ? `fired ${name}: ${id} waits for its turn`
        : `fired ${name}: ${id} waits behind ${run.waitingBehind}, the active run, and starts when that one ends`;
  }
}
