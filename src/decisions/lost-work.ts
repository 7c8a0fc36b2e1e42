/**
 * How often a worker looks for lost workers' work (their started runs, processes and workflow
 * runs) when no worker seems lost, ms: a backstop for what no lost worker explains.
 */
export const LOST_WORK_SCAN_EVERY_MS = 30_000;

/**
 * How long after a worker stopped or was retired its leftovers are still looked for at every
 * reap, ms: one reap ends at most a batch of a lost worker's runs, and the next ones go on.
 */
export const LOST_WORK_AFTER_STOP_MS = 60_000;

/**
 * Whether a reap at `now` (UTC ms) looks for lost workers' work (issue #24): always when every
 * other worker counts as dead (a SQLite store at start), or when a worker may have left work
 * behind (`workerGone`: one whose lease lapsed and is not retired yet, or one that stopped or was
 * retired within {@link LOST_WORK_AFTER_STOP_MS}); otherwise once every
 * {@link LOST_WORK_SCAN_EVERY_MS} after the last look at `lastScanAt` (UTC ms). Those scans read
 * every active run and process; with several live workers and none lost, each worker made them
 * every second for nothing (a quarter of PostgreSQL's time with four workers). Pure.
 */
export function scansLostWork(input: {
  readonly now: number;
  readonly lastScanAt: number;
  readonly othersDead: boolean;
  readonly workerGone: boolean;
}): boolean {
  return input.othersDead || input.workerGone || input.now - input.lastScanAt >= LOST_WORK_SCAN_EVERY_MS;
}
