import type { Bounds, FiredOneShot, Pause } from '../../client/types.js';

/** Why a bounded scheduler fires no more, in the CLI's output. */
export function finishedLine(bounds: Bounds): string {
  return bounds.finished === 'max-runs'
    ? `fires no more: it started ${bounds.runsStarted} of its maxRuns ${bounds.maxRuns}`
    : `fires no more: its endAt ${bounds.endAt} has passed`;
}

/** How a pause reads in the CLI's output: who, when and why. */
export function pauseLine(pause: Pause): string {
  return `paused by ${pause.by} at ${pause.at}${pause.note === '' ? '' : `: ${pause.note}`}`;
}

/** The fired one-shots of `ursa list --all`: a heading, then one line each (name, when, run, where its document is). */
export function firedLines(fired: readonly FiredOneShot[]): string[] {
  if (fired.length === 0) return ['fired one-shots: none'];
  return [
    'fired one-shots (they left the list; write one anew with a later at: to run it again):',
    ...fired.map(
      (f) =>
        `  ${f.name}: at ${f.at}, fired ${f.firedAt}, run ${f.correlationId}, ${f.trashPath === null ? 'no longer in the trash' : `in the trash at ${f.trashPath}`}`,
    ),
  ];
}

/** Why a next run in the past has not started, and what starts it (issue #23). */
export const OVERDUE_REASON = 'no worker is running (start one with ursa serve or ursa worker)';

/** The line `ursa list` prints under its table for an overdue scheduler. */
export function overdueLine(nextRunAt: string | null): string {
  return `next run ${nextRunAt} is overdue: ${OVERDUE_REASON}`;
}
