import { nextFireTime } from '../cron/index.js';
import type { ScheduleTiming } from './advance.js';

/**
 * Occurrence accounting (decisions §4): after any run of a scheduler, each of its occurrences in
 * a window must be served exactly once — by a run of its own (a row of `runs` with that
 * `scheduledFor`, whatever its outcome: completed, failed, skipped_overlap, skipped_misfire…) or
 * absorbed by one coalesced run (scheduledFor < occurrence ≤ coalescedUntil). None may be
 * missing, none served twice. Pure: the fault tests and the soak script (`npm run soak`) read the
 * runs from the store and hand them here.
 */

/** What the accounting needs of one run row. Instants are UTC epoch ms. */
export interface OccurrenceRecord {
  readonly scheduledFor: number;
  /** The newest occurrence the run absorbed (`runs.coalesced_until`); null when it absorbed none. */
  readonly coalescedUntil: number | null;
}

/** An occurrence served more than once, and how many times. */
export interface DoubledOccurrence {
  readonly at: number;
  readonly count: number;
}

/** The accounting of one scheduler's expected occurrences. */
export interface OccurrenceAccount {
  /** Expected occurrences. */
  readonly expected: number;
  /** Served exactly once, by a run of their own. */
  readonly served: number;
  /** Served exactly once, absorbed by a coalesced run. */
  readonly absorbed: number;
  /** Served by no run, ascending. */
  readonly missing: readonly number[];
  /** Served more than once (two runs, or a run and a coalesced run's range), ascending. */
  readonly doubled: readonly DoubledOccurrence[];
}

/** The fire times of a cron schedule in [from, to] (an `at:` instant when it lies there), ascending. */
export function occurrencesBetween(schedule: ScheduleTiming, from: number, to: number): number[] {
  const { trigger, zone } = schedule;
  if (trigger.kind === 'at') return trigger.instant >= from && trigger.instant <= to ? [trigger.instant] : [];
  const times: number[] = [];
  for (let t = nextFireTime(trigger.cron, zone, from - 1); t !== null && t <= to; ) {
    times.push(t);
    t = nextFireTime(trigger.cron, zone, t);
  }
  return times;
}

/** The first index of `sorted` whose value is greater than `value` (binary search). */
function firstAbove(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Accounts the `expected` occurrences of one scheduler (any order) against its run `records`
 * (any order; records of other instants are ignored but for the ranges they absorb).
 */
export function accountOccurrences(
  expected: readonly number[],
  records: readonly OccurrenceRecord[],
): OccurrenceAccount {
  const times = [...new Set(expected)].sort((a, b) => a - b);
  const own = new Uint32Array(times.length);
  const absorbedBy = new Uint32Array(times.length);
  for (const { scheduledFor, coalescedUntil } of records) {
    const at = firstAbove(times, scheduledFor) - 1;
    if (at >= 0 && times[at] === scheduledFor) own[at] = (own[at] as number) + 1;
    if (coalescedUntil === null || coalescedUntil <= scheduledFor) continue;
    const end = firstAbove(times, coalescedUntil);
    for (let i = at + 1; i < end; i++) absorbedBy[i] = (absorbedBy[i] as number) + 1;
  }
  let served = 0;
  let absorbed = 0;
  const missing: number[] = [];
  const doubled: DoubledOccurrence[] = [];
  for (const [i, at] of times.entries()) {
    const count = (own[i] as number) + (absorbedBy[i] as number);
    if (count === 0) missing.push(at);
    else if (count > 1) doubled.push({ at, count });
    else if (own[i] === 1) served++;
    else absorbed++;
  }
  return { expected: times.length, served, absorbed, missing, doubled };
}
