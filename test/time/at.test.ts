import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { parseAt } from '../../src/time/at.js';
import { timeZone } from '../../src/time/zone.js';
import { iso } from '../support/cases.js';
import { thrown } from '../support/cron.js';

const berlin = timeZone('Europe/Berlin');

// spec §10a, decisions §3: the three forms of at: and the gap/overlap rule for local times.
describe('at: values (spec §10a, decisions §3)', () => {
  it('reads a local date-time in the scheduler zone', () => {
    const at = parseAt('2026-05-14T08:00:00', berlin);
    expect(iso(at.instant)).toBe('2026-05-14T06:00:00Z');
    expect(at.form).toBe('local');
  });

  it('reads a local date-time as UTC when no zone is set', () => {
    expect(iso(parseAt('2026-05-14T08:00:00').instant)).toBe('2026-05-14T08:00:00Z');
  });

  it('allows leaving out the seconds and giving a fraction', () => {
    expect(iso(parseAt('2026-05-14T08:00', berlin).instant)).toBe('2026-05-14T06:00:00Z');
    expect(new Date(parseAt('2026-05-14T08:00:00.250Z').instant).toISOString()).toBe(
      '2026-05-14T08:00:00.250Z',
    );
  });

  it('takes the offset of a date-time with offset, not the zone', () => {
    const at = parseAt('2026-05-14T08:00:00+05:30', berlin);
    expect(iso(at.instant)).toBe('2026-05-14T02:30:00Z');
    expect(at.form).toBe('offset');
    expect(iso(parseAt('2026-05-14T08:00:00-03:00', berlin).instant)).toBe('2026-05-14T11:00:00Z');
  });

  it('reads Z as UTC', () => {
    const at = parseAt('2026-05-14T06:00:00Z', berlin);
    expect(iso(at.instant)).toBe('2026-05-14T06:00:00Z');
    expect(at.form).toBe('utc');
  });

  it('moves a local time in a spring-forward gap forward by the gap', () => {
    // 02:30 does not exist in Berlin on 2026-03-29; it becomes 03:30 CEST.
    expect(iso(parseAt('2026-03-29T02:30:00', berlin).instant)).toBe('2026-03-29T01:30:00Z');
  });

  it('takes the first instant of a local time repeated by a fall-back overlap', () => {
    expect(iso(parseAt('2026-10-25T02:30:00', berlin).instant)).toBe('2026-10-25T00:30:00Z');
  });

  it.each([
    'tomorrow at 8',
    '2026-05-14',
    '2026-02-30T08:00:00',
    '2026-05-14T24:00:00',
    '2026-05-14T08:00:00+25:00',
    '2026-05-14T08:00:00 Europe/Berlin',
    '',
  ])('refuses %j with AT_INVALID', (value) => {
    const error = thrown(() => parseAt(value, berlin)) as UrsaError;
    expect(error.code).toBe('AT_INVALID');
    expect(error.field).toBe('at');
    expect(error.value).toBe(value);
    expect(error.message).toMatch(/^at: ".*": /);
  });
});
