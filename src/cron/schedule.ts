import { MS_PER_SECOND } from '../time/calendar.js';
import type { OffsetPeriod, TimeZone } from '../time/zone.js';
import type { CronExpression } from './expression.js';
import { nextMatchingWall, previousMatchingWall } from './wall-search.js';

/**
 * Fire times of a cron expression in a zone, with the daylight-saving rule of decisions §3:
 *
 * - a matching wall time in a spring-forward gap fires at the instant it would have had with
 *   the offset before the gap (shifted forward by the gap's length);
 * - a matching wall time repeated by a fall-back overlap fires at its first instant only, unless
 *   the hour field matches all 24 hours, then at both;
 * - two wall times that map to one instant fire once.
 *
 * The search runs period by period (a stretch of constant UTC offset). Inside a period, wall time
 * and instant differ by a constant, so the field search of `wall-search.ts` applies directly;
 * the only extra candidates are the shifted gap times right after a spring-forward transition.
 * All instants are UTC epoch milliseconds; fire times are whole seconds.
 */

const INFINITY = Number.POSITIVE_INFINITY;

function isGap(p: OffsetPeriod): boolean {
  return p.previousOffset < p.offset;
}

function isOverlap(p: OffsetPeriod): boolean {
  return p.previousOffset > p.offset;
}

/** The first fire time in `period` at or after the instant `from`, or `INFINITY`. */
function firstInPeriod(cron: CronExpression, period: OffsetPeriod, from: number): number {
  const { start, end, offset, previousOffset } = period;
  let best = INFINITY;
  // Wall times repeated by an overlap already fired before the transition (first instant).
  let wallFrom = from + offset;
  if (isOverlap(period) && !cron.everyHour) wallFrom = Math.max(wallFrom, start + previousOffset);
  const wall = nextMatchingWall(cron, wallFrom, end + offset);
  if (wall !== null) best = wall - offset;
  const gapLength = offset - previousOffset;
  if (isGap(period) && from < start + gapLength) {
    // Wall times inside the gap [start + previousOffset, start + offset) keep the old offset.
    const shifted = nextMatchingWall(cron, from + previousOffset, start + offset);
    if (shifted !== null) best = Math.min(best, shifted - previousOffset);
  }
  return best;
}

/** The last fire time in `period` at or before the instant `from`, or `-INFINITY`. */
function lastInPeriod(cron: CronExpression, period: OffsetPeriod, from: number): number {
  const { start, offset, previousOffset } = period;
  let best = -INFINITY;
  let wallFloor = start + offset;
  if (isOverlap(period) && !cron.everyHour) wallFloor = start + previousOffset;
  const wall = previousMatchingWall(cron, from + offset, wallFloor);
  if (wall !== null) best = wall - offset;
  if (isGap(period)) {
    const gapEnd = start + offset - MS_PER_SECOND;
    const shifted = previousMatchingWall(
      cron,
      Math.min(from + previousOffset, gapEnd),
      start + previousOffset,
    );
    if (shifted !== null) best = Math.max(best, shifted - previousOffset);
  }
  return best;
}

/**
 * The next fire time strictly after `after`.
 *
 * @param cron a parsed expression (`parseCron`).
 * @param zone the zone the expression is read in (`timeZone`).
 * @param after UTC epoch milliseconds.
 * @returns UTC epoch milliseconds (whole seconds), or `null` when the expression never fires
 *   again (found at once for expressions that can never fire) or not before year 10000.
 */
export function nextFireTime(cron: CronExpression, zone: TimeZone, after: number): number | null {
  if (cron.neverFires) return null;
  let from = Math.floor(after / MS_PER_SECOND) * MS_PER_SECOND + MS_PER_SECOND;
  for (;;) {
    const period = zone.periodAt(from);
    const found = firstInPeriod(cron, period, from);
    if (found !== INFINITY) return found;
    if (period.end === INFINITY) return null;
    from = period.end;
  }
}

/**
 * The latest fire time strictly before `before` (e.g. the newest occurrence missed in a
 * catch-up window). Same rules and units as {@link nextFireTime}.
 */
export function previousFireTime(cron: CronExpression, zone: TimeZone, before: number): number | null {
  if (cron.neverFires) return null;
  let from = Math.ceil(before / MS_PER_SECOND) * MS_PER_SECOND - MS_PER_SECOND;
  for (;;) {
    const period = zone.periodAt(from);
    const found = lastInPeriod(cron, period, from);
    if (found !== -INFINITY) return found;
    if (period.start === -INFINITY) return null;
    from = period.start - MS_PER_SECOND;
  }
}

/**
 * Up to `count` successive fire times strictly after `after` (UTC epoch milliseconds); fewer
 * when the expression stops firing.
 */
export function nextFireTimes(cron: CronExpression, zone: TimeZone, after: number, count: number): number[] {
  const times: number[] = [];
  let t: number | null = after;
  while (times.length < count) {
    t = nextFireTime(cron, zone, t);
    if (t === null) break;
    times.push(t);
  }
  return times;
}
