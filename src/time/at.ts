import { Temporal } from 'temporal-polyfill';
import { UrsaError } from '../errors/index.js';
import type { TimeZone } from './zone.js';

/** How an `at:` value named its zone (spec §10a). */
export type AtForm = 'local' | 'offset' | 'utc';

/** A resolved `at:` value. */
export interface AtInstant {
  /** The one fire time, UTC epoch milliseconds. */
  readonly instant: number;
  /** `local`: read in the scheduler's zone; `offset`: its own offset; `utc`: ends in `Z`. */
  readonly form: AtForm;
}

const AT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/;

const ALLOWED =
  'an ISO-8601 date-time: local 2026-05-14T08:00:00 (read in timezone:), with an offset 2026-05-14T08:00:00+02:00, or UTC 2026-05-14T06:00:00Z';

function refuse(value: string, reason: string): never {
  throw new UrsaError('AT_INVALID', `at: ${JSON.stringify(value)}: ${reason}`, {
    field: 'at',
    value,
    allowed: ALLOWED,
  });
}

/**
 * Resolves an `at:` value (spec §10a, decisions §3) to its instant.
 *
 * - A local date-time (`2026-05-14T08:00:00`, seconds optional) is read in `zone`, else UTC. A local
 *   time in a spring-forward gap moves forward by the gap's length; one repeated by a fall-back
 *   overlap means its first instant.
 * - With an offset (`+02:00`), the offset decides and `zone` is not used; with `Z`, UTC.
 *
 * @throws UrsaError `AT_INVALID` naming the value and the accepted forms.
 */
export function parseAt(value: string, zone?: TimeZone): AtInstant {
  const m = AT.exec(value.trim());
  if (m === null) refuse(value, 'not a date-time');
  const [, year, month, day, hour, minute, second, fraction, z, sign, offsetHour, offsetMinute] = m;
  let local: Temporal.PlainDateTime;
  try {
    const nanos = (fraction ?? '').padEnd(9, '0');
    local = Temporal.PlainDateTime.from(
      {
        year: Number(year),
        month: Number(month),
        day: Number(day),
        hour: Number(hour),
        minute: Number(minute),
        second: Number(second ?? 0),
        millisecond: Number(nanos.slice(0, 3)),
        microsecond: Number(nanos.slice(3, 6)),
        nanosecond: Number(nanos.slice(6, 9)),
      },
      { overflow: 'reject' },
    );
  } catch {
    refuse(value, 'no such date or time');
  }
  if (z !== undefined) return { instant: local.toZonedDateTime('UTC').epochMilliseconds, form: 'utc' };
  if (sign !== undefined) {
    const minutes = Number(offsetHour) * 60 + Number(offsetMinute);
    if (Number(offsetHour) > 23 || Number(offsetMinute) > 59) refuse(value, 'the offset is out of range');
    const utc = local.toZonedDateTime('UTC').epochMilliseconds;
    return { instant: utc - (sign === '-' ? -minutes : minutes) * 60_000, form: 'offset' };
  }
  // 'compatible' is exactly the rule of decisions §3: gap → later by the gap, overlap → earlier instant.
  const zoned = local.toZonedDateTime(zone?.id ?? 'UTC', { disambiguation: 'compatible' });
  return { instant: zoned.epochMilliseconds, form: 'local' };
}
