/**
 * The six fields of a Spring/Quartz cron expression (decisions §3), in order, with their
 * ranges and names. Field names are the ones used in error messages.
 */

export type FieldName = 'second' | 'minute' | 'hour' | 'day-of-month' | 'month' | 'day-of-week';

export interface FieldSpec {
  readonly name: FieldName;
  readonly min: number;
  readonly max: number;
  /** Three-letter names (upper case) mapped to their value. */
  readonly names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES = Object.freeze({
  JAN: 1,
  FEB: 2,
  MAR: 3,
  APR: 4,
  MAY: 5,
  JUN: 6,
  JUL: 7,
  AUG: 8,
  SEP: 9,
  OCT: 10,
  NOV: 11,
  DEC: 12,
});

// Spring numbers the names MON=1 … SUN=7, which is why `SUN-SAT` is the range 7-6 that starts at Sunday.
const DAY_NAMES = Object.freeze({ MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6, SUN: 7 });

export const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
export const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
export const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
export const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31 };
export const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTH_NAMES };
/** 0 and 7 are both Sunday, 1 is Monday. */
export const DAY_OF_WEEK: FieldSpec = { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES };

export const FIELDS: readonly FieldSpec[] = [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];

/** The macros of decisions §3 and the six-field expression each stands for. */
export const MACROS: Readonly<Record<string, string>> = Object.freeze({
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
});
