import type { TimeZone } from '../../src/cron/index.js';
import { parseAt } from '../../src/time/at.js';
import { MS_PER_DAY } from '../../src/time/calendar.js';
import { formatInstant } from '../../src/time/instant.js';

/**
 * The backfill dialog's range in the zone the editor shows (issue #23), pure: its prefill and
 * how a typed date-time becomes the UTC instant the API takes.
 */

/** `2026-05-14 08:00:00`: the wall time of the instant `ms` (UTC epoch ms) in `zone`, to the second. */
export function wallText(ms: number, zone: TimeZone): string {
  const wall = new Date(Math.floor((ms + zone.offsetAt(ms)) / 1000) * 1000).toISOString();
  return `${wall.slice(0, 10)} ${wall.slice(11, 19)}`;
}

/** The prefilled range: from a day before `now` until `now` (UTC epoch ms), as wall times in `zone`. */
export function defaultRange(now: number, zone: TimeZone): { from: string; to: string } {
  return { from: wallText(now - MS_PER_DAY, zone), to: wallText(now, zone) };
}

/** A field's date-time as the API takes it, or what is wrong with it. */
export type ReadInstant = { readonly instant: string } | { readonly problem: string };

/**
 * A typed date-time as a UTC instant (`2026-05-14T06:00:00Z`): a wall time (`2026-05-14
 * 08:00:00`, `T` or a space, seconds optional) is read in `zone` (a time in a DST gap moves
 * forward by the gap, one repeated by an overlap means its first instant, decisions §3); one
 * with `Z` or an offset is taken as it is.
 */
export function readInstant(text: string, zone: TimeZone): ReadInstant {
  const value = text.trim().replace(/^(\d{4}-\d{2}-\d{2}) +(?=\d)/, '$1T');
  try {
    return { instant: formatInstant(parseAt(value, zone).instant) };
  } catch {
    return {
      problem: `not a date-time: write 2026-05-14 08:00:00 (read in ${zone.id}), or an instant with Z or an offset`,
    };
  }
}
