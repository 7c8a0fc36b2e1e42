/**
 * Whether a scheduler's next run is overdue at `now` (UTC ms), pure: it lies in the past by more
 * than `graceMs` (ms, ≥ 0) and no worker holds a live lease (`workerLive`), so nothing will start
 * it until one does (issue #23). `ursa list` and REST mark a next run overdue with no grace;
 * `ursa doctor` reports one overdue beyond the misfire threshold (issue #26). A scheduler waiting
 * for no run (`nextRunAt` null: disabled, spent, or a fired one-shot) is never overdue.
 */
export function isOverdue(nextRunAt: number | null, now: number, workerLive: boolean, graceMs = 0): boolean {
  return nextRunAt !== null && nextRunAt < now - graceMs && !workerLive;
}
