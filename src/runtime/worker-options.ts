import { DEFAULT_FENCE_GRACE_MS, TAKEOVER_MARGIN_MS } from '../fencing/lease.js';
import { DEFAULT_CLOCK_JUMP_THRESHOLD_MS } from './clock-jumps.js';
import type { RunFaults } from './faults.js';
import type { Backoff } from './record-retry.js';

/** Options of the scheduling loop. Durations are milliseconds. */
export interface WorkerOptions {
  /** Longest sleep between two looks at the store (a change another process made shows within it). */
  readonly maxSleepMs?: number;
  /** How often expired documents and feed lines are deleted (decisions §2: at least once a minute). */
  readonly sweepEveryMs?: number;
  /** How often this worker renews its lease. */
  readonly heartbeatMs?: number;
  /**
   * This worker's lease: it fences itself (ends its runs) before its heartbeat is this old, and
   * the others take its runs over once another worker's heartbeat is older than this plus
   * `takeoverMarginMs` (decisions §5). Every worker of a store should use the same value.
   */
  readonly leaseTtlMs?: number;
  /**
   * How long past the lease the others wait before they take a silent worker's runs over:
   * room for wall clocks that read apart; default {@link TAKEOVER_MARGIN_MS}. Every worker of a
   * store should use the same value; SQLite's takeover of a store waits it too.
   */
  readonly takeoverMarginMs?: number;
  /**
   * SIGTERM → SIGKILL of each process group when this worker fences itself; the fence begins
   * this much plus 500 ms before the lease expires. Default {@link DEFAULT_FENCE_GRACE_MS}.
   */
  readonly fenceGraceMs?: number;
  /**
   * True when no other worker can be alive at start (SQLite: the one serving process of its store,
   * see `Worker.takeStore`, decisions §5): whatever a previous process left is recovered at
   * once instead of after its lease lapses.
   */
  readonly exclusive?: boolean;
  /**
   * How far ahead of an occurrence it is claimed, milliseconds: the claim and the preparation of
   * its start happen before the instant, and at the instant only the start is written. 0 claims
   * at the occurrence. Widened, up to `MAX_CLAIM_WINDOW_MS`, by the time claiming what is coming
   * takes (decisions/claim-window.ts): a top of the hour is claimed before its hour. An occurrence
   * claimed ahead fires with its scheduler as it was at the claim, unless the scheduler was
   * deleted or disabled since (then it is recorded skipped). Default {@link DEFAULT_ACQUIRE_AHEAD_MS}.
   */
  readonly acquireAheadMs?: number;
  /** Fault points for tests. */
  readonly faults?: RunFaults;
  /** First delay before retrying a failed spawn, milliseconds (doubling, 5 retries, at most a minute). */
  readonly spawnRetryBaseMs?: number;
  /** Backoff of a record (a batch's starts, a run's end) the store refused; default `RECORD_RETRY`. */
  readonly recordRetry?: Backoff;
  /**
   * A jump of the wall clock against the monotonic clock between two passes beyond this,
   * milliseconds, is logged, and after a jump back next runs are recomputed (see `ClockWatch`);
   * default {@link DEFAULT_CLOCK_JUMP_THRESHOLD_MS}.
   */
  readonly clockJumpThresholdMs?: number;
  /**
   * The host's boot-time clock, milliseconds, suspend included (default: Linux's, from
   * `/proc/uptime`): a renewal later than the lease and the takeover margin by it stops the runs
   * (see `SelfFence.lapsedBefore`). Tests step one of their own.
   */
  readonly bootClock?: () => number | undefined;
}

/**
 * The default fire-ahead window of the loop, milliseconds: longer than claiming and preparing a
 * second's due set takes (tens of ms for thousands), short enough that a document changed in it
 * is rare; see {@link WorkerOptions.acquireAheadMs}.
 */
export const DEFAULT_ACQUIRE_AHEAD_MS = 500;

/**
 * How long past the lease (`leaseTtlMs`) a SQLite store stays with its serving process before a
 * newcomer may take it over, milliseconds: the takeover margin of every worker's runs
 * ({@link TAKEOVER_MARGIN_MS}, decisions §5, `Worker.takeStore`).
 */
export const STORE_MARGIN_MS = TAKEOVER_MARGIN_MS;

/** The loop's settings: {@link WorkerOptions} with every default filled in (but the test hooks). */
export type LoopSettings = Required<
  Omit<WorkerOptions, 'faults' | 'spawnRetryBaseMs' | 'recordRetry' | 'bootClock'>
>;

/** {@link WorkerOptions} with their defaults, pure. */
export function loopSettings(options: WorkerOptions): LoopSettings {
  return {
    maxSleepMs: options.maxSleepMs ?? 1000,
    sweepEveryMs: options.sweepEveryMs ?? 30_000,
    heartbeatMs: options.heartbeatMs ?? 1000,
    leaseTtlMs: options.leaseTtlMs ?? 5000,
    takeoverMarginMs: options.takeoverMarginMs ?? TAKEOVER_MARGIN_MS,
    fenceGraceMs: options.fenceGraceMs ?? DEFAULT_FENCE_GRACE_MS,
    exclusive: options.exclusive ?? false,
    acquireAheadMs: options.acquireAheadMs ?? DEFAULT_ACQUIRE_AHEAD_MS,
    clockJumpThresholdMs: options.clockJumpThresholdMs ?? DEFAULT_CLOCK_JUMP_THRESHOLD_MS,
  };
}
