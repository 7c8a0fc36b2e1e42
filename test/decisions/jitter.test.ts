import { describe, expect, it } from 'vitest';
import { parseCron, timeZone } from '../../src/cron/index.js';
import type { ScheduleTiming } from '../../src/decisions/advance.js';
import { UNBOUNDED } from '../../src/decisions/bounds.js';
import { jitteredFireTime, jitterOffset, upcomingFires } from '../../src/decisions/jitter.js';
import { iso } from '../support/cases.js';

const t = (text: string) => Date.parse(text);

// issue #22 item 4: jitter, a per-scheduler offset every worker and preview agrees on.
describe('jitter (issue #22)', () => {
  const job = { tenant: 'acme', project: 'ops', name: 'job' };

  it('gives each scheduler one offset within the bound, the same on every call', () => {
    const offset = jitterOffset(job, 30_000);
    expect(offset).toBe(jitterOffset({ ...job }, 30_000));
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThan(30_000);
  });

  it('spreads schedulers over the whole bound, a _tenant scheduler differently in each project', () => {
    const hour = 3_600_000;
    const offsets = Array.from({ length: 1000 }, (_, i) => jitterOffset({ ...job, project: `p${i}` }, hour));
    expect(Math.min(...offsets)).toBeLessThan(hour / 20);
    expect(Math.max(...offsets)).toBeGreaterThan(hour - hour / 20);
    // 1000 draws of 3600 seconds: about 870 distinct ones.
    expect(new Set(offsets).size).toBeGreaterThan(800);
    // Tenths of the bound each hold about a tenth of them.
    for (let tenth = 0; tenth < 10; tenth++) {
      const inTenth = offsets.filter((o) => Math.floor(o / (hour / 10)) === tenth).length;
      expect(inTenth).toBeGreaterThan(60);
      expect(inTenth).toBeLessThan(140);
    }
  });

  it('offsets by whole seconds from a bound of two seconds, by milliseconds below it', () => {
    for (let i = 0; i < 50; i++) {
      const identity = { ...job, name: `job-${i}` };
      expect(jitterOffset(identity, 30_000) % 1000).toBe(0);
      expect(jitterOffset(identity, 30_000)).toBeLessThan(30_000);
      expect(jitterOffset(identity, 1_500)).toBeLessThan(1_500);
      expect(jitterOffset(identity, 999)).toBeLessThan(999);
    }
    // Bounds under two seconds spread by milliseconds (in whole seconds, 1.5 s would give only 0).
    for (const bound of [999, 1_000, 1_999]) {
      const offsets = new Set(
        Array.from({ length: 50 }, (_, i) => jitterOffset({ ...job, name: `j${i}` }, bound)),
      );
      expect(offsets.size).toBeGreaterThan(40);
    }
  });

  it('delays a fire by the offset, wrapping one as long as the interval within it (never to the next occurrence)', () => {
    const every10s: ScheduleTiming = {
      trigger: { kind: 'cron', expression: '*/10 * * * * *', cron: parseCron('*/10 * * * * *') },
      zone: timeZone('UTC'),
    };
    const due = t('2026-03-01T05:00:00Z');
    expect(jitteredFireTime(every10s, due, 4_321)).toBe(due + 4_321);
    expect(jitteredFireTime(every10s, due, 25_000)).toBe(due + 5_000);
    expect(jitteredFireTime(every10s, due, 10_000)).toBe(due);
    expect(jitteredFireTime(every10s, due, 9_999)).toBe(due + 9_999);
    expect(jitteredFireTime(every10s, due, 0)).toBe(due);
  });
});

describe('upcoming fires, as a preview shows them (issue #22)', () => {
  const job = { tenant: 'acme', project: 'ops', name: 'job' };
  const hourly = (bounds = UNBOUNDED, jitterMs?: number) => ({
    trigger: { kind: 'cron' as const, expression: '0 0 * * * *', cron: parseCron('0 0 * * * *') },
    zone: timeZone('UTC'),
    bounds,
    jitterMs,
  });
  const shown = (fires: { occurrence: number; firesAt: number }[]) =>
    fires.map((f) => [iso(f.occurrence), iso(f.firesAt)]);

  it('lists the occurrences after from, each delayed by the scheduler offset', () => {
    const offset = jitterOffset(job, 600_000);
    expect(offset).toBeGreaterThan(0);
    const fires = upcomingFires(hourly(UNBOUNDED, 600_000), job, t('2026-03-01T05:10:00Z'), 3);
    expect(shown(fires)).toEqual(
      ['06', '07', '08'].map((h) => [`2026-03-01T${h}:00:00Z`, iso(t(`2026-03-01T${h}:00:00Z`) + offset)]),
    );
    // Without jitter a fire is its occurrence.
    expect(shown(upcomingFires(hourly(), job, t('2026-03-01T05:10:00Z'), 1))).toEqual([
      ['2026-03-01T06:00:00Z', '2026-03-01T06:00:00Z'],
    ]);
  });

  it('keeps to startAt and endAt, and lists no more than maxRuns leaves', () => {
    const bounds = { ...UNBOUNDED, startAt: t('2026-03-01T07:00:00Z'), endAt: t('2026-03-01T09:00:00Z') };
    const fires = upcomingFires(hourly(bounds), job, t('2026-03-01T05:10:00Z'), 10);
    expect(fires.map((f) => iso(f.occurrence))).toEqual([
      '2026-03-01T07:00:00Z',
      '2026-03-01T08:00:00Z',
      '2026-03-01T09:00:00Z',
    ]);
    expect(upcomingFires(hourly(bounds), job, t('2026-03-01T05:10:00Z'), 10, 2)).toHaveLength(2);
    expect(upcomingFires(hourly(bounds), job, t('2026-03-01T05:10:00Z'), 10, 0)).toEqual([]);
    expect(upcomingFires(hourly(bounds), job, t('2026-03-01T09:00:00Z'), 10)).toEqual([]);
  });

  it("lists a one-shot's at: instant once", () => {
    const at = t('2026-03-01T06:30:00Z');
    const once = {
      trigger: { kind: 'at' as const, at: '2026-03-01T06:30:00Z', instant: at },
      zone: timeZone('UTC'),
    };
    expect(upcomingFires(once, job, t('2026-03-01T05:10:00Z'), 5)).toEqual([{ occurrence: at, firesAt: at }]);
  });
});
