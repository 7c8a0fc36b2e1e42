import { type CronExpression, nextFireTime, type TimeZone } from '../cron/index.js';

/** The most occurrences one backfill may queue: a larger range is refused with its count. */
export const MAX_BACKFILL_OCCURRENCES = 1000;

/**
 * How far a refused range is counted: past this many occurrences the refusal says "more than"
 * (a `* * * * * *` cron over a year has 31 million; counting them all would hold the caller up).
 */
export const BACKFILL_COUNT_CAP = 100_000;

/**
 * The occurrences of a backfill range, or why it is refused:
 * - `occurrences`: every fire time in the range, oldest first (UTC ms, whole seconds);
 * - `too-many`: more than {@link MAX_BACKFILL_OCCURRENCES}; `count` is exact unless `atLeast`
 *   (then the range has more than `count`).
 */
export type BackfillRange =
  | { readonly kind: 'occurrences'; readonly occurrences: readonly number[] }
  | { readonly kind: 'too-many'; readonly count: number; readonly atLeast: boolean };

/**
 * The fire times of `cron` read in `zone` from `from` to `to`, both inclusive (UTC epoch ms),
 * pure (issue #22 backfill). The caller has checked `from <= to`; an empty range, or a cron that
 * never fires in it, gives no occurrences.
 */
export function backfillRange(
  cron: CronExpression,
  zone: TimeZone,
  from: number,
  to: number,
  limit = MAX_BACKFILL_OCCURRENCES,
): BackfillRange {
  const occurrences: number[] = [];
  // Strictly after one millisecond earlier: `from` itself counts when it is a fire time.
  for (let t = nextFireTime(cron, zone, from - 1); t !== null && t <= to; t = nextFireTime(cron, zone, t)) {
    occurrences.push(t);
    if (occurrences.length > limit) return tooMany(cron, zone, t, to, occurrences.length);
  }
  return { kind: 'occurrences', occurrences };
}

// Counts on (without keeping them) up to BACKFILL_COUNT_CAP.
function tooMany(
  cron: CronExpression,
  zone: TimeZone,
  last: number,
  to: number,
  counted: number,
): BackfillRange {
  let count = counted;
  for (let t = nextFireTime(cron, zone, last); t !== null && t <= to; t = nextFireTime(cron, zone, t)) {
    if (count >= BACKFILL_COUNT_CAP) return { kind: 'too-many', count, atLeast: true };
    count++;
  }
  return { kind: 'too-many', count, atLeast: false };
}
