import { UrsaError } from '../errors/index.js';

/**
 * The reason a run ends with when its worker fenced itself: it could not renew its lease in time,
 * so it stopped the run before another worker could take it over (decisions §5 fencing).
 */
export const LEASE_LOST = 'lease-lost';

/**
 * How long past a worker's lease (`leaseTtlMs`) the others wait before they treat it as dead and
 * take its runs over, milliseconds (decisions §5 fencing). The worker itself has ended its process
 * groups before its lease expires (see {@link fenceAfterMs}); the margin is for the wall clocks of
 * hosts (or containers) that read apart, and for a renewal recorded late. SQLite's takeover of a
 * serving process's store waits the same margin.
 */
export const TAKEOVER_MARGIN_MS = 2000;

/**
 * The default pause between the SIGTERM and the SIGKILL a self-fence sends to each running
 * process group, milliseconds: room for a run to end cleanly.
 */
export const DEFAULT_FENCE_GRACE_MS = 1000;

/**
 * What a self-fence keeps free between its SIGKILL and the lease's expiry, milliseconds: the
 * watchdog thread's lag behind the main thread (`WATCHDOG_LAG_MS`), a timer of it that fires late
 * on a busy host, and the kernel delivering the signals.
 */
export const FENCE_SLACK_MS = 500;

/**
 * How long after the last renewal that succeeded (the instant it was sent) a worker fences itself,
 * milliseconds: `leaseTtlMs − graceMs − FENCE_SLACK_MS`, so that its SIGTERM, the grace, and its
 * SIGKILL all fall before the lease expires (decisions §5 fencing).
 *
 * @throws UrsaError `ARGUMENT_INVALID` (field `leaseTtlMs`) when that leaves no time at all.
 */
export function fenceAfterMs(leaseTtlMs: number, graceMs: number): number {
  const after = leaseTtlMs - graceMs - FENCE_SLACK_MS;
  if (after > 0) return after;
  throw new UrsaError(
    'ARGUMENT_INVALID',
    `leaseTtlMs: ${leaseTtlMs} ms leaves no time to renew the lease before the worker ends its runs (its fence grace ${graceMs} ms and ${FENCE_SLACK_MS} ms of slack come first)`,
    { field: 'leaseTtlMs', value: leaseTtlMs, allowed: `more than ${graceMs + FENCE_SLACK_MS} ms` },
  );
}
