/**
 * Proleptic Gregorian calendar arithmetic on plain integers, used for wall-clock times.
 *
 * A "wall time" here is a local date and time encoded as the milliseconds since
 * 1970-01-01T00:00:00 *as if it were UTC*; it carries no zone. The zone layer (`zone.ts`)
 * turns wall times into instants. Keeping this integer-only makes the search fast and keeps
 * the host's time zone out of every computation.
 */

export const MS_PER_SECOND = 1000;
export const MS_PER_MINUTE = 60_000;
export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 of the civil date `year-month-day` (month 1-12). */
export function daysFromCivil(year: number, month: number, day: number): number {
  // Howard Hinnant's days_from_civil: eras of 400 years starting in March.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** A civil date. `month` is 1-12, `day` 1-31. */
export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** The civil date of `days` since 1970-01-01 (inverse of {@link daysFromCivil}). */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Day of the week of `days` since 1970-01-01: 0 = Sunday … 6 = Saturday. */
export function weekdayOfDays(days: number): number {
  // 1970-01-01 was a Thursday (4).
  return (((days + 4) % 7) + 7) % 7;
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Number of days in `month` (1-12) of a leap or common year. */
export function monthLength(month: number, leap: boolean): number {
  return month === 2 && leap ? 29 : (MONTH_LENGTHS[month - 1] as number);
}

/** A wall time split into fields; `month` 1-12, `day` 1-31. */
export interface WallFields extends CivilDate {
  hour: number;
  minute: number;
  second: number;
}

/** Splits a wall time (ms, see module doc) into fields, dropping milliseconds. */
export function wallFields(wall: number): WallFields {
  const days = Math.floor(wall / MS_PER_DAY);
  const secondOfDay = Math.floor((wall - days * MS_PER_DAY) / MS_PER_SECOND);
  const { year, month, day } = civilFromDays(days);
  return {
    year,
    month,
    day,
    hour: Math.floor(secondOfDay / 3600),
    minute: Math.floor(secondOfDay / 60) % 60,
    second: secondOfDay % 60,
  };
}

/** The wall time (ms, see module doc) of the given fields. */
export function wallFromFields(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number {
  return (
    daysFromCivil(year, month, day) * MS_PER_DAY +
    hour * MS_PER_HOUR +
    minute * MS_PER_MINUTE +
    second * MS_PER_SECOND
  );
}

/** Formats a wall time as `YYYY-MM-DDTHH:MM:SS` (years 0-9999). */
export function formatWall(wall: number): string {
  const f = wallFields(wall);
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${String(f.year).padStart(4, '0')}-${p2(f.month)}-${p2(f.day)}T${p2(f.hour)}:${p2(f.minute)}:${p2(f.second)}`;
}
