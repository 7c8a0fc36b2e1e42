import { Temporal } from 'temporal-polyfill';
import { MS_PER_DAY } from './calendar.js';

/** A duration in milliseconds, or why the text is not one. */
export type DurationResult = { readonly ms: number } | { readonly reason: string };

/**
 * Reads an ISO-8601 duration of fixed length (`PT10M`, `PT1H30M`, `P1D`, `P2W`) as milliseconds
 * (decisions §4 `catchUpWindow`, recipe `timeout`, operator settings). Relative to nothing: a day
 * is 24 hours and a week 7 days; years and months, which have no fixed length, are refused, as are
 * negative durations and, unless `allowZero`, zero. A fraction of a millisecond rounds up.
 *
 * @returns `{ ms }`, or `{ reason }` saying what is wrong, starting with the quoted text (the
 *   caller names the field).
 */
export function parseFixedDuration(
  text: string,
  options: { readonly allowZero?: boolean } = {},
): DurationResult {
  let duration: Temporal.Duration;
  try {
    duration = Temporal.Duration.from(text);
  } catch {
    return {
      reason: `${JSON.stringify(text)} is not an ISO-8601 duration (e.g. PT30S, PT10M, PT1H30M, P1D)`,
    };
  }
  if (duration.years !== 0 || duration.months !== 0) {
    return {
      reason: `${JSON.stringify(text)} has years or months, which have no fixed length; use weeks, days, hours, minutes or seconds (e.g. P30D)`,
    };
  }
  const ms = duration.weeks * 7 * MS_PER_DAY + duration.with({ weeks: 0 }).total({ unit: 'milliseconds' });
  if (ms < 0) return { reason: `${JSON.stringify(text)} is negative` };
  if (ms === 0 && !options.allowZero) return { reason: `${JSON.stringify(text)} must be longer than zero` };
  if (!Number.isSafeInteger(Math.ceil(ms))) return { reason: `${JSON.stringify(text)} is too long` };
  return { ms: Math.ceil(ms) };
}

/**
 * A duration in milliseconds (a whole number, zero or more) as ISO-8601 text, the form
 * {@link parseFixedDuration} reads back: days of 24 hours, hours, minutes and seconds with the
 * milliseconds as a fraction (`86400000` → `P1D`, `90000` → `PT1M30S`, `20` → `PT0.02S`).
 */
export function formatDuration(ms: number): string {
  return Temporal.Duration.from({ milliseconds: ms }).round({ largestUnit: 'days' }).toString();
}

const HUMAN_UNITS = [
  ['day', 'd', 86_400_000],
  ['hour', 'h', 3_600_000],
  ['minute', 'min', 60_000],
  ['second', 's', 1000],
] as const;

/**
 * A duration in milliseconds as people read it (issue #23): its largest unit and the next one when
 * that is not zero, each a whole number, pluralised — `60000` → `1 minute`, `5400000` →
 * `1 hour 30 minutes`, `28924740000` → `334 days 18 hours`, `90061000` → `1 day 1 hour`. Smaller
 * units are dropped, not rounded; under a second is `less than a second`. A negative duration is
 * read as its length. `short` writes the units as `d`, `h`, `min`, `s` (`1 h 30 min`, `0 s` under a
 * second) for tables. For text only: {@link formatDuration} is the form that reads back.
 */
export function humanDuration(ms: number, options: { readonly short?: boolean } = {}): string {
  const abs = Math.abs(ms);
  const largest = HUMAN_UNITS.findIndex(([, , size]) => abs >= size);
  if (largest === -1) return options.short ? '0 s' : 'less than a second';
  const parts: string[] = [];
  let rest = abs;
  for (const [unit, short, size] of HUMAN_UNITS.slice(largest, largest + 2)) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count === 0) continue;
    parts.push(options.short ? `${count} ${short}` : `${count} ${unit}${count === 1 ? '' : 's'}`);
  }
  return parts.join(' ');
}
