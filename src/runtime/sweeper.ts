import { checkLimit } from '../store/feed.js';
import { feedRetentionDays } from '../store/setting-cascades.js';
import { MS_PER_DAY } from '../time/calendar.js';
import type { Runtime } from './context.js';

/** Options of {@link sweep}. */
export interface SweepOptions {
  /** Rows deleted per statement (a whole number ≥ 1); default 500. */
  readonly batch?: number;
}

/** What one {@link sweep} deleted. */
export interface SweepResult {
  /** Expired documents (run logs past their `expiresAt`, spec §9a). */
  readonly documents: number;
  /** Feed lines older than their tenant's `feed.retentionDays` (spec §12). */
  readonly feedLines: number;
}

/** Lets timers and I/O callbacks (the worker's heartbeat, running processes) run between two batches. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `deleteBatch` until a batch deletes fewer than `batch` rows; returns the total. */
async function inBatches(batch: number, deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < batch) return total;
    await yieldToEventLoop();
  }
}

/**
 * The sweeper (decisions §2: "expiresAt with a sweeper that deletes expired rows at least once a
 * minute"; spec §9a TTL; spec §12 feed retention). Deletes, as of `now` (UTC epoch ms):
 *
 * - every document whose `expiresAt` is at or before `now` — permanently, no archive, no trash
 *   (spec §9a);
 * - for each tenant with feed lines, the lines with `at` before `now − feed.retentionDays ×
 *   86,400,000 ms` (the tenant's setting, default 90 days; 0 or less keeps them all). Other tenants'
 *   lines are untouched.
 *
 * Each is deleted in bounded statements of at most `batch` rows, yielding to the event loop between
 * them, so a large backlog never holds the store or the process for long. Safe to run on several
 * workers at once: a row is deleted once, whoever gets it.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a `batch` that is not a whole number ≥ 1.
 */
export async function sweep(rt: Runtime, now: number, options: SweepOptions = {}): Promise<SweepResult> {
  const batch = checkLimit(options.batch ?? 500, 'batch');
  const { documents, feed } = rt.repos;
  const expired = await inBatches(batch, () => documents.sweepExpired(now, batch));
  let feedLines = 0;
  for (const tenant of await feed.tenants()) {
    const days = await feedRetentionDays(rt.repos, tenant);
    if (days <= 0) continue;
    const before = now - days * MS_PER_DAY;
    feedLines += await inBatches(batch, () => feed.sweepOlderThan(tenant, before, batch));
  }
  return { documents: expired, feedLines };
}
