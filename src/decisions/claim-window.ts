/**
 * How far ahead of their instant a worker claims occurrences (issue #24, decisions §4): its
 * fire-ahead window, widened when many occurrences are coming. Claiming costs about the same for
 * every occurrence, so claiming 50,000 that share one instant (everybody's "every morning at
 * 08:00") takes seconds; claimed at their instant, the last would start those seconds late.
 * Claimed that long before, only their starts are left for the instant. Quartz's fire-ahead
 * window is a fixed setting; this one follows what is due. Pure.
 */

/** The longest fire-ahead window, ms: how long before its instant an occurrence may be claimed. */
export const MAX_CLAIM_WINDOW_MS = 30_000;

/** The claim cost per occurrence assumed before any large claim was measured, ms. */
export const ASSUMED_CLAIM_MS = 0.25;

/** What a worker knows when it sizes its fire-ahead window (see {@link claimWindowMs}). */
export interface ClaimOutlook {
  /** Occurrences of the worker's slots due within {@link ClaimOutlook.maxMs} from now (counted up to a cap). */
  readonly due: number;
  /** Measured time to claim one occurrence, ms (wall time of large claims, the worker's load included). */
  readonly perClaimMs: number;
  /** The configured fire-ahead window, ms: the window is never shorter; 0 claims at the instant, always. */
  readonly baseMs: number;
  /** The longest window, ms. */
  readonly maxMs: number;
}

/**
 * The fire-ahead window, ms: the configured one, plus one and a half times the time claiming the
 * `due` occurrences takes at the measured rate (a margin for a store slower than its average),
 * at most `maxMs`. A configured window of 0 (claim at the instant) is never widened.
 */
export function claimWindowMs({ due, perClaimMs, baseMs, maxMs }: ClaimOutlook): number {
  if (baseMs <= 0) return 0;
  const claiming = Math.ceil(due * perClaimMs * 1.5);
  return Math.max(baseMs, Math.min(maxMs, baseMs + claiming));
}
