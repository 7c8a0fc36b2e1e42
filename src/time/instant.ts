import { UrsaError } from '../errors/index.js';
import { formatWall, MS_PER_DAY, weekdayOfDays } from './calendar.js';
import type { TimeZone } from './zone.js';

// An ISO-8601 / RFC 3339 instant: a date-time with `Z` or a numeric offset.
const INSTANT = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an ISO-8601 instant with `Z` or an offset (e.g. `2026-05-14T06:00:00Z`,
 * `2026-05-14T08:00:00+02:00`) into UTC epoch milliseconds.
 *
 * @param field the field path named in the error, e.g. `from`.
 * @throws UrsaError `INSTANT_INVALID` for anything else, including local times without an offset.
 */
export function parseInstant(text: string, field: string): number {
  const ms = INSTANT.test(text) ? Date.parse(text.replace(' ', 'T')) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new UrsaError('INSTANT_INVALID', `${field}: ${JSON.stringify(text)} is not an instant`, {
      field,
      value: text,
      allowed: 'an ISO-8601 date-time with Z or an offset, e.g. 2026-05-14T06:00:00Z',
    });
  }
  return ms;
}

/** ISO-8601 UTC for UTC epoch milliseconds; the fraction is left out when it is zero. */
export function formatInstant(epochMs: number): string {
  let text = recentInstants.get(epochMs);
  if (text === undefined) {
    const iso = new Date(epochMs).toISOString();
    text = iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
    if (recentInstants.size >= RECENT_INSTANTS) recentInstants.clear();
    recentInstants.set(epochMs, text);
  }
  return text;
}

// The instants formatted last: a worker writes the same few (a second's occurrence, its start and
// end) into thousands of run logs and feed lines a second (issue #24).
const recentInstants = new Map<number, string>();
const RECENT_INSTANTS = 1024;

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** `±HH:MM` for an offset in milliseconds. */
export function formatOffset(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${offsetMs < 0 ? '-' : '+'}${hh}:${mm}`;
}

/** `Sun 2026-03-29 03:30:00 +02:00`: the local time of an instant (UTC epoch ms) in `zone`. */
export function formatZoned(epochMs: number, zone: TimeZone): string {
  const offset = zone.offsetAt(epochMs);
  const wall = epochMs + offset;
  const weekday = WEEKDAYS[weekdayOfDays(Math.floor(wall / MS_PER_DAY))];
  return `${weekday} ${formatWall(wall).replace('T', ' ')} ${formatOffset(offset)}`;
}
