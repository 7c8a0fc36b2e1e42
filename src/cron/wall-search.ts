import {
  daysFromCivil,
  isLeapYear,
  MS_PER_DAY,
  wallFields,
  wallFromFields,
  weekdayOfDays,
} from '../time/calendar.js';
import type { CronExpression } from './expression.js';

/**
 * Searches matching wall times (local date-times encoded as ms, see `calendar.ts`), field by
 * field from the largest: a month that does not match is skipped whole, then a day, and so on.
 * The zone is not involved here; `schedule.ts` maps wall times to instants.
 */

// Wall times are whole seconds of years 1-9999; the search gives up past these bounds.
const MIN_YEAR = 1;
const MAX_YEAR = 9999;

function dayMaskOf(cron: CronExpression, year: number, month: number): number {
  return cron.dayMask(month, isLeapYear(year), weekdayOfDays(daysFromCivil(year, month, 1)));
}

/**
 * The least matching wall time ≥ `from` (inclusive; milliseconds are dropped), or `null` when
 * there is none before `limit` (exclusive) or before the end of year 9999.
 */
export function nextMatchingWall(cron: CronExpression, from: number, limit: number): number | null {
  if (cron.neverFires) return null;
  let { year, month, day, hour, minute, second } = wallFields(from);
  const limitMonth = Math.min(limit, wallFromFields(MAX_YEAR, 12, 31, 23, 59, 59));
  for (;;) {
    const m = cron.month.next[month] as number;
    if (m === -1) {
      year++;
      month = 1;
      day = 1;
      hour = minute = second = 0;
      if (year > MAX_YEAR) return null;
      continue;
    }
    if (m !== month) {
      month = m;
      day = 1;
      hour = minute = second = 0;
    }
    if (daysFromCivil(year, month, 1) * MS_PER_DAY >= limitMonth) return null;
    const matching = day > 31 ? 0 : (dayMaskOf(cron, year, month) >>> day) << day;
    if (matching === 0) {
      month++;
      day = 1;
      hour = minute = second = 0;
      continue;
    }
    const d = 31 - Math.clz32(matching & -matching);
    if (d !== day) {
      day = d;
      hour = minute = second = 0;
    }
    const h = cron.hour.next[hour] as number;
    if (h === -1) {
      day++;
      hour = minute = second = 0;
      continue;
    }
    if (h !== hour) {
      hour = h;
      minute = second = 0;
    }
    const mi = cron.minute.next[minute] as number;
    if (mi === -1) {
      hour++;
      minute = second = 0;
      continue;
    }
    if (mi !== minute) {
      minute = mi;
      second = 0;
    }
    const s = cron.second.next[second] as number;
    if (s === -1) {
      minute++;
      second = 0;
      continue;
    }
    const wall = wallFromFields(year, month, day, hour, minute, s);
    return wall < limit ? wall : null;
  }
}

/**
 * The greatest matching wall time ≤ `from` (inclusive; milliseconds are dropped), or `null` when
 * there is none at or after `floor` or after the start of year 1.
 */
export function previousMatchingWall(cron: CronExpression, from: number, floor: number): number | null {
  if (cron.neverFires) return null;
  let { year, month, day, hour, minute, second } = wallFields(from);
  const floorMonth = Math.max(floor, wallFromFields(MIN_YEAR, 1, 1, 0, 0, 0));
  for (;;) {
    const m = month < 1 ? -1 : (cron.month.prev[month] as number);
    if (m === -1) {
      year--;
      month = 12;
      day = 31;
      hour = 23;
      minute = second = 59;
      if (year < MIN_YEAR) return null;
      continue;
    }
    if (m !== month) {
      month = m;
      day = 31;
      hour = 23;
      minute = second = 59;
    }
    if (
      daysFromCivil(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1) * MS_PER_DAY <=
      floorMonth
    ) {
      return null;
    }
    const mask = dayMaskOf(cron, year, month);
    const matching = day < 1 ? 0 : day >= 31 ? mask : mask & ((2 << day) - 1);
    if (matching === 0) {
      month--;
      day = 31;
      hour = 23;
      minute = second = 59;
      continue;
    }
    const d = 31 - Math.clz32(matching);
    if (d !== day) {
      day = d;
      hour = 23;
      minute = second = 59;
    }
    const h = hour < 0 ? -1 : (cron.hour.prev[hour] as number);
    if (h === -1) {
      day--;
      hour = 23;
      minute = second = 59;
      continue;
    }
    if (h !== hour) {
      hour = h;
      minute = second = 59;
    }
    const mi = minute < 0 ? -1 : (cron.minute.prev[minute] as number);
    if (mi === -1) {
      hour--;
      minute = second = 59;
      continue;
    }
    if (mi !== minute) {
      minute = mi;
      second = 59;
    }
    const s = second < 0 ? -1 : (cron.second.prev[second] as number);
    if (s === -1) {
      minute--;
      second = 59;
      continue;
    }
    const wall = wallFromFields(year, month, day, hour, minute, s);
    return wall >= floor ? wall : null;
  }
}
