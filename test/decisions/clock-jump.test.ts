import { describe, expect, it } from 'vitest';
import { nextFireTime, parseCron, timeZone } from '../../src/cron/index.js';
import type { ScheduleTiming } from '../../src/decisions/advance.js';
import { clockJump, replanAfterJumpBack } from '../../src/decisions/clock-jump.js';
import { cronTiming } from '../../src/runtime/clock-jumps.js';
import { timingOf } from '../../src/runtime/registrar.js';
import { parseSchedulerDocument } from '../../src/scheduler/document.js';
import { iso } from '../support/cases.js';
import { cronScheduler } from '../support/project.js';

function cron(expression: string, zone = 'UTC'): ScheduleTiming {
  return { trigger: { kind: 'cron', expression, cron: parseCron(expression) }, zone: timeZone(zone) };
}

const t = (time: string) => Date.parse(time.length === 8 ? `2026-06-01T${time}Z` : time);
const replan = (
  schedule: ScheduleTiming,
  state: { nextRunAt: string | null; lastScheduledAt: string | null; lastCoalescedUntil?: string },
  now: string,
) => {
  const next = replanAfterJumpBack(
    {
      nextRunAt: state.nextRunAt === null ? null : t(state.nextRunAt),
      lastScheduledAt: state.lastScheduledAt === null ? null : t(state.lastScheduledAt),
      lastCoalescedUntil: state.lastCoalescedUntil === undefined ? null : t(state.lastCoalescedUntil),
    },
    schedule,
    t(now),
  );
  return next === undefined ? undefined : iso(next);
};

// issue #20 item 5: the wall clock against the monotonic clock, and the pure replan after a jump back.
describe('clockJump (issue #20)', () => {
  const at = (wall: number, monotonic: number) => ({ wall, monotonic });

  it('is the wall clock advance less the monotonic one, beyond the threshold, signed', () => {
    expect(clockJump(at(t('08:00:00'), 1000), at(t('07:00:00'), 1500), 5000)).toBe(-3_600_500);
    expect(clockJump(at(t('08:00:00'), 1000), at(t('09:00:00'), 1500), 5000)).toBe(3_599_500);
  });

  it('is no jump within the threshold, nor when the process stalled (both clocks moved alike)', () => {
    expect(clockJump(at(t('08:00:00'), 1000), at(t('08:00:05'), 1000), 5000)).toBeNull();
    expect(clockJump(at(t('08:00:00'), 1000), at(t('07:59:55'), 1000), 5000)).toBeNull();
    expect(clockJump(at(t('08:00:00'), 1000), at(t('08:10:00'), 601_000), 5000)).toBeNull();
  });
});

describe('replanAfterJumpBack (issue #20, decisions §4)', () => {
  const everyMinute = cron('0 * * * * *');

  it('moves a schedule that never claimed to the first occurrence after the new now', () => {
    expect(replan(everyMinute, { nextRunAt: '08:02:00', lastScheduledAt: null }, '07:01:30')).toBe(
      '2026-06-01T07:02:00Z',
    );
  });

  it('moves one whose last claim lies before the new now', () => {
    expect(replan(everyMinute, { nextRunAt: '08:02:00', lastScheduledAt: '06:59:00' }, '07:01:30')).toBe(
      '2026-06-01T07:02:00Z',
    );
  });

  it('never to an occurrence at or before the last one claimed: that one waits for the first after it', () => {
    expect(replan(everyMinute, { nextRunAt: '08:02:00', lastScheduledAt: '08:01:00' }, '07:01:30')).toBe(
      undefined,
    );
    // Its nextRunAt was further ahead still: the first occurrence after the last claim.
    expect(replan(everyMinute, { nextRunAt: '08:05:00', lastScheduledAt: '08:01:00' }, '07:01:30')).toBe(
      '2026-06-01T08:02:00Z',
    );
  });

  it('never into what a coalesced claim absorbed', () => {
    // Claimed 08:01 late at 08:05:30, absorbing up to 08:05; set back to 08:03:30.
    const coalesced = { nextRunAt: '08:06:00', lastScheduledAt: '08:01:00', lastCoalescedUntil: '08:05:00' };
    expect(replan(everyMinute, coalesced, '08:03:30')).toBe(undefined);
    expect(replan(everyMinute, { ...coalesced, lastCoalescedUntil: '08:03:00' }, '08:02:30')).toBe(
      '2026-06-01T08:04:00Z',
    );
  });

  it('keeps a schedule that is due, waits for nothing, or is a one-shot', () => {
    expect(replan(everyMinute, { nextRunAt: '07:00:00', lastScheduledAt: null }, '07:01:30')).toBe(undefined);
    expect(replan(everyMinute, { nextRunAt: '07:02:00', lastScheduledAt: null }, '07:01:30')).toBe(undefined);
    expect(replan(everyMinute, { nextRunAt: null, lastScheduledAt: null }, '07:01:30')).toBe(undefined);
    const oneShot: ScheduleTiming = {
      trigger: { kind: 'at', at: '08:30', instant: t('08:30:00') },
      zone: timeZone('UTC'),
    };
    expect(replan(oneShot, { nextRunAt: '08:30:00', lastScheduledAt: null }, '07:01:30')).toBe(undefined);
  });

  it("keeps the zone's wall time (a daily 09:00 in New York, set back two days)", () => {
    const daily = cron('0 0 9 * * *', 'America/New_York');
    expect(
      replan(
        daily,
        { nextRunAt: '2026-06-04T13:00:00Z', lastScheduledAt: '2026-06-01T13:00:00Z' },
        '2026-06-01T14:00:00Z',
      ),
    ).toBe('2026-06-02T13:00:00Z');
  });

  it('gives an occurrence of the schedule after the new now and the last claim, earlier than before', () => {
    const expression = parseCron('*/7 * * * * *');
    const every7s = cron('*/7 * * * * *');
    const fires = (instant: number) => nextFireTime(expression, every7s.zone, instant - 1) === instant;
    let moved = 0;
    for (let i = 0; i < 200; i++) {
      const now = t('08:00:00') + ((i * 7919) % 3_600_000);
      const last = i % 3 === 0 ? null : now + ((i * 104_729) % 1_200_000) - 600_000;
      const nextRunAt = (nextFireTime(expression, every7s.zone, now + (i % 5) * 60_000) as number) + 1;
      const next = replanAfterJumpBack({ nextRunAt, lastScheduledAt: last }, every7s, now);
      if (next === undefined) continue;
      moved++;
      expect(next).toBeGreaterThan(Math.max(now, last ?? now));
      expect(next).toBeLessThan(nextRunAt);
      expect(fires(next)).toBe(true);
    }
    expect(moved).toBeGreaterThan(50);
  });
});

describe('cronTiming', () => {
  it('reads back the schedule of the timing a refresh stores (timingOf)', () => {
    const definition = parseSchedulerDocument(
      cronScheduler('@hourly', 'noop', 'timezone: Europe/Berlin\n').replace('timezone: UTC\n', ''),
      {
        name: 'job',
        path: 'ops/_vance/scheduler/job.yaml',
      },
    );
    const schedule = cronTiming(timingOf(definition));
    expect(schedule?.zone.id).toBe('Europe/Berlin');
    // The same next occurrences as the document's own trigger.
    expect(schedule && replan(schedule, { nextRunAt: '12:00:00', lastScheduledAt: null }, '08:10:00')).toBe(
      '2026-06-01T09:00:00Z',
    );
    expect(schedule?.trigger.kind === 'cron' && schedule.trigger.cron.normalized).toBe(
      definition.trigger.kind === 'cron' && definition.trigger.cron.normalized,
    );
    expect(cronTiming('{"at":1780000000000,"zone":"UTC","enabled":true}')).toBeUndefined();
    expect(cronTiming(null)).toBeUndefined();
    expect(cronTiming('not json')).toBeUndefined();
  });
});
