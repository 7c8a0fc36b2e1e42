import { describe, expect, it } from 'vitest';
import { parseCron, timeZone } from '../../src/cron/index.js';
import { firstRunAt, type ScheduleTiming, scheduleAdvance } from '../../src/decisions/advance.js';
import { boundsRefusal, boundsSpent, maxRunsSpent, UNBOUNDED } from '../../src/decisions/bounds.js';
import type { ScheduleBounds } from '../../src/scheduler/definition.js';
import { iso } from '../support/cases.js';

const t = (text: string) => Date.parse(text);

function hourly(bounds: Partial<ScheduleBounds>, zone = 'UTC'): ScheduleTiming {
  const expression = '0 0 * * * *';
  return {
    trigger: { kind: 'cron', expression, cron: parseCron(expression) },
    zone: timeZone(zone),
    bounds: { ...UNBOUNDED, ...bounds },
  };
}

const first = (schedule: ScheduleTiming, now: string) => {
  const next = firstRunAt(schedule, t(now));
  return next === null ? null : iso(next);
};

// issue #22 item 5: startAt, endAt and maxRuns.
describe('scheduler bounds (issue #22)', () => {
  it('waits for the first occurrence at or after startAt, an occurrence at startAt itself included', () => {
    const schedule = hourly({ startAt: t('2026-03-01T05:00:00Z') });
    expect(first(schedule, '2026-02-01T00:10:00Z')).toBe('2026-03-01T05:00:00Z');
    expect(first(hourly({ startAt: t('2026-03-01T05:30:00Z') }), '2026-02-01T00:00:00Z')).toBe(
      '2026-03-01T06:00:00Z',
    );
    // Once startAt is past, the next occurrence after now.
    expect(first(schedule, '2026-03-02T07:10:00Z')).toBe('2026-03-02T08:00:00Z');
  });

  it('waits for no occurrence after endAt, an occurrence at endAt itself included', () => {
    const schedule = hourly({ endAt: t('2026-03-01T05:00:00Z') });
    expect(first(schedule, '2026-03-01T04:10:00Z')).toBe('2026-03-01T05:00:00Z');
    expect(first(schedule, '2026-03-01T05:00:00Z')).toBeNull();
    const a = scheduleAdvance(schedule, t('2026-03-01T05:00:00Z'), t('2026-03-01T05:00:00.010Z'));
    expect(a.nextRunAt).toBeNull();
  });

  it('absorbs no occurrence after endAt into a catch-up', () => {
    const schedule = hourly({ endAt: t('2026-03-01T05:30:00Z') });
    const a = scheduleAdvance(schedule, t('2026-03-01T03:00:00Z'), t('2026-03-01T09:15:00Z'));
    expect({ coalesced: a.coalesced, newestDue: iso(a.newestDue), nextRunAt: a.nextRunAt }).toEqual({
      coalesced: true,
      newestDue: '2026-03-01T05:00:00Z',
      nextRunAt: null,
    });
    const last = scheduleAdvance(schedule, t('2026-03-01T05:00:00Z'), t('2026-03-01T09:15:00Z'));
    expect({ coalesced: last.coalesced, newestDue: iso(last.newestDue) }).toEqual({
      coalesced: false,
      newestDue: '2026-03-01T05:00:00Z',
    });
  });

  it('refuses a run before startAt, after endAt, or once maxRuns runs started', () => {
    const bounds = { startAt: 1000, endAt: 2000, maxRuns: 3 };
    expect(boundsRefusal(bounds, 999, 0)).toBe('before-start');
    expect(boundsRefusal(bounds, 1000, 0)).toBeUndefined();
    expect(boundsRefusal(bounds, 2000, 2)).toBeUndefined();
    expect(boundsRefusal(bounds, 2001, 0)).toBe('after-end');
    expect(boundsRefusal(bounds, 1500, 3)).toBe('max-runs');
    expect(boundsRefusal(UNBOUNDED, 0, 1e9)).toBeUndefined();
  });

  it('says why a scheduler fires no more: its count first, then its end', () => {
    const bounds = { startAt: undefined, endAt: 2000, maxRuns: 2 };
    expect(boundsSpent(bounds, 1500, 1)).toBeUndefined();
    expect(boundsSpent(bounds, 1500, 2)).toBe('max-runs');
    expect(boundsSpent(bounds, 2001, 1)).toBe('ended');
    expect(boundsSpent(bounds, 2001, 2)).toBe('max-runs');
    expect(maxRunsSpent(UNBOUNDED, 1e9)).toBe(false);
  });
});
