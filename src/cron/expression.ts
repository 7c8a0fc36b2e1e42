import { monthLength } from '../time/calendar.js';

/** One item of a day-of-month field (decisions §3); the items of a list are OR-ed. */
export type DayOfMonthRule =
  /** Plain days: bit d set for day d (1-31). */
  | { readonly kind: 'days'; readonly mask: number }
  /** `L` (offset 0) or `L-n`: the last day of the month minus `offset`; nothing when before the 1st. */
  | { readonly kind: 'last'; readonly offset: number }
  /** `LW`: the last weekday (Monday-Friday) of the month. */
  | { readonly kind: 'lastWeekday' }
  /** `nW`: the weekday nearest to day `day` inside its month; nothing in a month without that day. */
  | { readonly kind: 'nearestWeekday'; readonly day: number };

/** One item of a day-of-week field; weekdays are 0 = Sunday … 6 = Saturday. */
export type DayOfWeekRule =
  /** Plain weekdays: bit w set for weekday w. */
  | { readonly kind: 'weekdays'; readonly mask: number }
  /** `nL`: the last such weekday of the month. */
  | { readonly kind: 'lastOfMonth'; readonly weekday: number }
  /** `n#k`: the k-th (1-5) such weekday of the month. */
  | { readonly kind: 'nth'; readonly weekday: number; readonly nth: number };

/** Next/previous lookup for one time field: `next[v]` is the least allowed value ≥ v, -1 when none. */
export interface FieldTable {
  readonly next: Int8Array;
  readonly prev: Int8Array;
}

/** The validated parts of an expression; produced only by the parser. */
export interface CronParts {
  readonly seconds: readonly boolean[];
  readonly minutes: readonly boolean[];
  readonly hours: readonly boolean[];
  readonly months: readonly boolean[];
  /** `null` means every day (`*` or `?`). */
  readonly daysOfMonth: readonly DayOfMonthRule[] | null;
  /** `null` means every weekday (`*` or `?`). */
  readonly daysOfWeek: readonly DayOfWeekRule[] | null;
}

function fieldTable(allowed: readonly boolean[]): FieldTable {
  // One extra slot past the maximum so that "value + 1" after the last value answers -1.
  const size = allowed.length + 1;
  const next = new Int8Array(size).fill(-1);
  const prev = new Int8Array(size).fill(-1);
  let last = -1;
  for (let v = 0; v < allowed.length; v++) {
    if (allowed[v]) last = v;
    prev[v] = last;
  }
  let following = -1;
  for (let v = allowed.length - 1; v >= 0; v--) {
    if (allowed[v]) following = v;
    next[v] = following;
  }
  return { next, prev };
}

const SATURDAY = 6;
const SUNDAY = 0;

function dayOfMonthMask(rule: DayOfMonthRule, length: number, firstWeekday: number): number {
  const weekday = (day: number) => (firstWeekday + day - 1) % 7;
  switch (rule.kind) {
    case 'days':
      return rule.mask;
    case 'last': {
      const day = length - rule.offset;
      return day >= 1 ? 1 << day : 0;
    }
    case 'lastWeekday': {
      const w = weekday(length);
      return 1 << (w === SATURDAY ? length - 1 : w === SUNDAY ? length - 2 : length);
    }
    case 'nearestWeekday': {
      const n = rule.day;
      if (n > length) return 0;
      const w = weekday(n);
      // The nearest weekday never leaves the month: 1W on a Saturday is Monday the 3rd.
      if (w === SATURDAY) return 1 << (n === 1 ? 3 : n - 1);
      if (w === SUNDAY) return 1 << (n === length ? n - 2 : n + 1);
      return 1 << n;
    }
  }
}

function dayOfWeekMask(rule: DayOfWeekRule, length: number, firstWeekday: number): number {
  switch (rule.kind) {
    case 'weekdays': {
      let mask = 0;
      for (let day = 1; day <= length; day++) {
        if (rule.mask & (1 << ((firstWeekday + day - 1) % 7))) mask |= 1 << day;
      }
      return mask;
    }
    case 'lastOfMonth': {
      const lastWeekday = (firstWeekday + length - 1) % 7;
      return 1 << (length - ((lastWeekday - rule.weekday + 7) % 7));
    }
    case 'nth': {
      const day = 1 + ((rule.weekday - firstWeekday + 7) % 7) + 7 * (rule.nth - 1);
      return day <= length ? 1 << day : 0;
    }
  }
}

const KEYS_PER_MONTH = 14; // 2 (common, leap) × 7 (weekday of the 1st)

/**
 * A parsed, validated cron expression: immutable, and the only input the search accepts.
 * Create one with `parseCron`; the raw text is kept in {@link CronExpression.source} for display only.
 */
export class CronExpression {
  /** The expression as the user wrote it. */
  readonly source: string;
  /** The six-field form that was parsed (a macro's expansion, white space normalised). */
  readonly normalized: string;
  /** @internal lookup tables for the time fields and the month. */
  readonly second: FieldTable;
  /** @internal */
  readonly minute: FieldTable;
  /** @internal */
  readonly hour: FieldTable;
  /** @internal months 1-12 (index 0 unused). */
  readonly month: FieldTable;
  /**
   * True when the hour field matches all 24 hours (`*`, `0-23`, `*\/1`, …). Such an expression
   * fires at both instants of a wall time repeated by a fall-back overlap (decisions §3).
   */
  readonly everyHour: boolean;
  /** True when no date ever matches (e.g. `0 0 0 31 2 *`); found at parse time, not by searching. */
  readonly neverFires: boolean;

  readonly #daysOfMonth: readonly DayOfMonthRule[] | null;
  readonly #daysOfWeek: readonly DayOfWeekRule[] | null;
  // Matching days depend only on (month, leap year, weekday of the 1st): 168 masks, filled lazily.
  readonly #dayMasks = new Int32Array(12 * KEYS_PER_MONTH);
  readonly #dayMaskKnown = new Uint8Array(12 * KEYS_PER_MONTH);

  /** @internal use `parseCron`. */
  constructor(source: string, normalized: string, parts: CronParts) {
    this.source = source;
    this.normalized = normalized;
    this.second = fieldTable(parts.seconds);
    this.minute = fieldTable(parts.minutes);
    this.hour = fieldTable(parts.hours);
    this.month = fieldTable(parts.months);
    this.everyHour = parts.hours.every(Boolean);
    this.#daysOfMonth = parts.daysOfMonth;
    this.#daysOfWeek = parts.daysOfWeek;
    this.neverFires = !this.#anyDayMatches(parts.months);
    Object.freeze(this);
  }

  /**
   * Days of `month` (1-12) that match both day fields, as a bit mask (bit d = day d).
   * `leap` is whether the year is a leap year, `firstWeekday` the weekday of the 1st (0 = Sunday).
   */
  dayMask(month: number, leap: boolean, firstWeekday: number): number {
    const key = (month - 1) * KEYS_PER_MONTH + (leap ? 7 : 0) + firstWeekday;
    if (this.#dayMaskKnown[key] === 1) return this.#dayMasks[key] as number;
    const length = monthLength(month, leap);
    const allDays = (~0 >>> (32 - length)) << 1; // bits 1..length
    let dom = this.#daysOfMonth === null ? allDays : 0;
    for (const rule of this.#daysOfMonth ?? []) dom |= dayOfMonthMask(rule, length, firstWeekday);
    let dow = this.#daysOfWeek === null ? allDays : 0;
    for (const rule of this.#daysOfWeek ?? []) dow |= dayOfWeekMask(rule, length, firstWeekday);
    const mask = dom & dow & allDays;
    this.#dayMasks[key] = mask;
    this.#dayMaskKnown[key] = 1;
    return mask;
  }

  // Every (month, leap, weekday of the 1st) combination occurs in the 400-year Gregorian cycle,
  // so an expression fires at all exactly when one of these 168 masks is non-empty.
  #anyDayMatches(months: readonly boolean[]): boolean {
    for (let month = 1; month <= 12; month++) {
      if (!months[month]) continue;
      for (let firstWeekday = 0; firstWeekday < 7; firstWeekday++) {
        if (this.dayMask(month, false, firstWeekday) !== 0) return true;
        if (month === 2 && this.dayMask(month, true, firstWeekday) !== 0) return true;
      }
    }
    return false;
  }
}
