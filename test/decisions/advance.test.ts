import { describe, expect, it } from 'vitest';
import { parseCron, timeZone } from '../../src/cron/index.js';
import { firstRunAt, type ScheduleTiming, scheduleAdvance } from '../../src/decisions/advance.js';
import { iso } from '../support/cases.js';

function cron(expression: string, zone = 'UTC'): ScheduleTiming {
  return { trigger: { kind: 'cron', expression, cron: parseCron(expression) }, zone: timeZone(zone) };
}

const t = (text: string) => Date.parse(text);

function advance(schedule: ScheduleTiming, dueAt: string, now: string) {
  const a = scheduleAdvance(schedule, t(dueAt), t(now));
  return {
    scheduledFor: iso(a.scheduledFor),
    nextRunAt: a.nextRunAt === null ? null : iso(a.nextRunAt),
    coalesced: a.coalesced,
    newestDue: iso(a.newestDue),
  };
}

// The required unit cases of decisions §4, each at a fixed clock.
describe('scheduleAdvance (decisions §4)', () => {
  const every10s = cron('*/10 * * * * *');

  it('collapses a backlog of any size into one claim, computed from now', () => {
    expect(advance(every10s, '2026-01-01T00:00:00Z', '2026-01-08T12:34:56.789Z')).toEqual({
      scheduledFor: '2026-01-01T00:00:00Z',
      nextRunAt: '2026-01-08T12:35:00Z',
      coalesced: true,
      newestDue: '2026-01-08T12:34:50Z',
    });
    // Ten years behind costs the same two cron steps.
    expect(advance(every10s, '2016-01-01T00:00:00Z', '2026-01-01T00:00:05Z').nextRunAt).toBe(
      '2026-01-01T00:00:10Z',
    );
  });

  it('reports a single missed occurrence as coalesced', () => {
    expect(advance(every10s, '2026-01-01T00:00:00Z', '2026-01-01T00:00:10.001Z')).toEqual({
      scheduledFor: '2026-01-01T00:00:00Z',
      nextRunAt: '2026-01-01T00:00:20Z',
      coalesced: true,
      newestDue: '2026-01-01T00:00:10Z',
    });
  });

  it('leaves an on-time claim unaffected: the same next as before', () => {
    expect(advance(every10s, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')).toEqual({
      scheduledFor: '2026-01-01T00:00:00Z',
      nextRunAt: '2026-01-01T00:00:10Z',
      coalesced: false,
      newestDue: '2026-01-01T00:00:00Z',
    });
    expect(advance(every10s, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.004Z').nextRunAt).toBe(
      '2026-01-01T00:00:10Z',
    );
  });

  it('keeps the zone wall time when catching up across a DST shift', () => {
    // Daily 09:00 Berlin: due the Friday before the spring-forward Sunday, claimed on Monday.
    const daily = cron('0 0 9 * * *', 'Europe/Berlin');
    expect(advance(daily, '2026-03-27T08:00:00Z', '2026-03-30T06:30:00Z')).toEqual({
      scheduledFor: '2026-03-27T08:00:00Z',
      nextRunAt: '2026-03-30T07:00:00Z', // 09:00 CEST
      coalesced: true,
      newestDue: '2026-03-29T07:00:00Z', // 09:00 CEST on the Sunday
    });
  });

  it('does not double-claim when the worker clock is slightly behind', () => {
    // now < dueAt: the next occurrence is still after dueAt, so the same instant cannot be claimed again.
    expect(advance(every10s, '2026-01-01T00:00:10Z', '2026-01-01T00:00:09.950Z')).toEqual({
      scheduledFor: '2026-01-01T00:00:10Z',
      nextRunAt: '2026-01-01T00:00:20Z',
      coalesced: false,
      newestDue: '2026-01-01T00:00:10Z',
    });
  });

  it('does not skip when the worker clock is slightly ahead', () => {
    expect(advance(every10s, '2026-01-01T00:00:10Z', '2026-01-01T00:00:10.900Z')).toEqual({
      scheduledFor: '2026-01-01T00:00:10Z',
      nextRunAt: '2026-01-01T00:00:20Z',
      coalesced: false,
      newestDue: '2026-01-01T00:00:10Z',
    });
  });

  it('ends a one-shot after its single claim, however late (spec §10a)', () => {
    const at: ScheduleTiming = {
      trigger: { kind: 'at', at: '2026-05-14T08:00:00Z', instant: t('2026-05-14T08:00:00Z') },
      zone: timeZone('UTC'),
    };
    expect(advance(at, '2026-05-14T08:00:00Z', '2026-05-20T00:00:00Z')).toEqual({
      scheduledFor: '2026-05-14T08:00:00Z',
      nextRunAt: null,
      coalesced: false,
      newestDue: '2026-05-14T08:00:00Z',
    });
  });
});

describe('firstRunAt (decisions §4)', () => {
  it('waits for the next cron occurrence strictly after now', () => {
    expect(
      iso(firstRunAt(cron('0 0 8 * * MON-FRI', 'Europe/Berlin'), t('2026-05-15T06:00:00Z')) as number),
    ).toBe('2026-05-18T06:00:00Z');
  });

  it('waits for an at: instant even when it has passed, so a one-shot catches up (spec §10a)', () => {
    const instant = t('2026-05-14T08:00:00Z');
    const at: ScheduleTiming = {
      trigger: { kind: 'at', at: '2026-05-14T08:00:00Z', instant },
      zone: timeZone('UTC'),
    };
    expect(firstRunAt(at, t('2026-06-01T00:00:00Z'))).toBe(instant);
  });
});
