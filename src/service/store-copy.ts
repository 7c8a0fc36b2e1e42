import { resolve } from 'node:path';
import { TAKEOVER_MARGIN_MS } from '../fencing/lease.js';
import type { Runtime } from '../runtime/context.js';
import { loopSettings } from '../runtime/worker-options.js';
import { type CopyResult, copyStore } from '../store/copy/copy.js';

/**
 * Moving, backing up and restoring whole stores (issue #26), for the CLI: `ursa store copy`,
 * `ursa backup`, `ursa restore`.
 */

export type { CopyResult, TableSummary } from '../store/copy/copy.js';
export { copyMismatch } from '../store/copy/copy.js';

/** How long a worker's heartbeat keeps it live, ms: the default lease and the takeover margin. */
const LIVE_WITHIN_MS = loopSettings({}).leaseTtlMs + TAKEOVER_MARGIN_MS;

/**
 * Copies the store at `from` into the store at `to` (see `copyStore`); a worker of either store
 * is live at `now` (UTC ms) when its heartbeat is within the default lease and takeover margin.
 */
export function copyStores(
  from: string,
  to: string,
  options: { force?: boolean; live?: boolean; now: number },
): Promise<CopyResult> {
  return copyStore(from, to, { ...options, leaseMs: LIVE_WITHIN_MS });
}

/**
 * Backs the runtime's store up into the new file `file` (relative to `cwd`), online, through the
 * runtime's own connection (`Store.backup`); returns the file's absolute path.
 */
export async function backupStore(rt: Pick<Runtime, 'repos'>, file: string, cwd: string): Promise<string> {
  const path = resolve(cwd, file);
  await rt.repos.store.backup(path);
  return path;
}

/**
 * Restores the backup `file` (a SQLite store file) into the store at `to`: a copy whose source is
 * the backup. The backup's workers are never live (it is a file), so its runs in flight are
 * carried as they are, to be reaped or adopted on `to` like any run of a lost worker.
 */
export function restoreStore(
  file: string,
  to: string,
  options: { force?: boolean; now: number },
): Promise<CopyResult> {
  return copyStores(file, to, { ...options, live: true });
}
