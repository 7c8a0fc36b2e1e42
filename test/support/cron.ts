import { nextFireTimes, parseCron, previousFireTime, timeZone } from '../../src/cron/index.js';
import { iso } from './cases.js';

/** The next `count` fire times of `expr` in `zone` after the ISO instant `from`, as ISO strings. */
export function fires(expr: string, from: string, count = 5, zone = 'UTC'): string[] {
  return nextFireTimes(parseCron(expr), timeZone(zone), Date.parse(from), count).map(iso);
}

/** The latest fire time strictly before the ISO instant `before`, as an ISO string or null. */
export function previous(expr: string, before: string, zone = 'UTC'): string | null {
  const t = previousFireTime(parseCron(expr), timeZone(zone), Date.parse(before));
  return t === null ? null : iso(t);
}

/** The error `fn` throws (fails the test when it throws nothing). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, none was thrown');
}
