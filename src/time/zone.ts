import { Temporal } from 'temporal-polyfill';
import { UrsaError } from '../errors/index.js';

/**
 * A stretch of time during which a zone's UTC offset is constant.
 * All values are milliseconds: `start`/`end` are UTC epoch instants (`start` inclusive, `end`
 * exclusive, ±Infinity when open), offsets are local minus UTC.
 */
export interface OffsetPeriod {
  readonly start: number;
  readonly end: number;
  /** Offset in force during the period. */
  readonly offset: number;
  /** Offset in force just before `start` (equal to `offset` when `start` is -Infinity). */
  readonly previousOffset: number;
}

function epochMsOf(zdt: Temporal.ZonedDateTime | null): number | null {
  return zdt === null ? null : zdt.epochMilliseconds;
}

/**
 * An IANA time zone with its offset history, read from the runtime's time zone data through
 * Temporal (`temporal-polyfill`, which uses `Intl`). Periods are looked up once and cached, so
 * repeated searches cost a binary search, not a call into `Intl`.
 *
 * Create with {@link timeZone}; instances are shared per canonical id.
 */
export class TimeZone {
  /** Canonical IANA id, e.g. `Europe/Berlin`. */
  readonly id: string;
  // Disjoint periods sorted by start; not necessarily contiguous.
  readonly #periods: OffsetPeriod[] = [];
  #last: OffsetPeriod | undefined;

  /** @internal use {@link timeZone}. */
  constructor(id: string) {
    this.id = id;
  }

  /** The offset period that contains the instant `epochMs` (UTC epoch milliseconds). */
  periodAt(epochMs: number): OffsetPeriod {
    const last = this.#last;
    if (last !== undefined && epochMs >= last.start && epochMs < last.end) return last;
    const periods = this.#periods;
    let lo = 0;
    let hi = periods.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const p = periods[mid] as OffsetPeriod;
      if (epochMs < p.start) hi = mid - 1;
      else if (epochMs >= p.end) lo = mid + 1;
      else {
        this.#last = p;
        return p;
      }
    }
    const period = this.#load(epochMs);
    periods.splice(lo, 0, period);
    this.#last = period;
    return period;
  }

  /** UTC offset in milliseconds (local minus UTC) at the instant `epochMs`. */
  offsetAt(epochMs: number): number {
    return this.periodAt(epochMs).offset;
  }

  #load(epochMs: number): OffsetPeriod {
    const zdt = Temporal.Instant.fromEpochMilliseconds(epochMs).toZonedDateTimeISO(this.id);
    const offset = zdt.offsetNanoseconds / 1e6;
    const end = epochMsOf(zdt.getTimeZoneTransition('next')) ?? Number.POSITIVE_INFINITY;
    // `previous` is strictly before its receiver; ask from 1 ms later so a transition at `epochMs` counts.
    const after = Temporal.Instant.fromEpochMilliseconds(epochMs + 1).toZonedDateTimeISO(this.id);
    const startMs = epochMsOf(after.getTimeZoneTransition('previous'));
    if (startMs === null) {
      return { start: Number.NEGATIVE_INFINITY, end, offset, previousOffset: offset };
    }
    const before = Temporal.Instant.fromEpochMilliseconds(startMs - 1).toZonedDateTimeISO(this.id);
    return { start: startMs, end, offset, previousOffset: before.offsetNanoseconds / 1e6 };
  }
}

const zones = new Map<string, TimeZone>();

/**
 * The {@link TimeZone} for an IANA id (case-insensitive, e.g. `europe/berlin`; `UTC`).
 * Fixed offsets such as `+02:00` are not zones and are refused.
 *
 * @throws UrsaError `ZONE_INVALID` when the id is not a time zone this runtime knows.
 */
export function timeZone(id: string): TimeZone {
  const cached = zones.get(id);
  if (cached !== undefined) return cached;
  let canonical: string;
  try {
    if (!/^[A-Za-z]/.test(id)) throw new RangeError('not an IANA name');
    canonical = new Temporal.ZonedDateTime(0n, id).timeZoneId;
  } catch {
    throw new UrsaError('ZONE_INVALID', `timezone: ${JSON.stringify(id)} is not an IANA time zone`, {
      field: 'timezone',
      value: id,
      allowed: 'an IANA time zone id such as Europe/Berlin, America/New_York or UTC',
    });
  }
  const zone = zones.get(canonical) ?? new TimeZone(canonical);
  zones.set(canonical, zone);
  zones.set(id, zone);
  return zone;
}
