import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScheduleState } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const AT = Date.parse('2026-06-01T08:00:00Z');

function state(
  tenant: string,
  project: string,
  name: string,
  nextRunAt: number | null,
  lastScheduledAt: number | null = null,
): ScheduleState {
  return {
    tenant,
    project,
    name,
    source: 'project',
    documentVersion: 1,
    nextRunAt,
    lastScheduledAt,
    timing: null,
  };
}

// issue #20: what a replan after the wall clock was set back reads and writes, on both stores.
describe.each(DIALECTS)('schedule states for a replan on %s (issue #20)', (dialect) => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  });
  afterEach(() => t.close());

  it('pages through the states waiting past an instant in key order, and no others', async () => {
    const { schedules } = t.rt.repos;
    for (const s of [
      state('b', 'ops', 'x', AT + 60_000),
      state('a', 'web', 'a', AT + 60_000),
      state('a', 'ops', 'z', AT + 1),
      state('a', 'ops', 'y', AT),
      state('a', 'ops', 'w', null),
      state('a', 'ops', 'b', AT + 5_000),
      state('a', 'ops', 'a', AT + 5_000),
    ])
      await schedules.upsert(s, AT);
    const keys = (page: readonly ScheduleState[]) => page.map((s) => `${s.tenant}/${s.project}/${s.name}`);
    const first = await schedules.waitingAfter(AT, undefined, 2);
    expect(keys(first)).toEqual(['a/ops/a', 'a/ops/b']);
    const second = await schedules.waitingAfter(AT, first.at(-1), 2);
    expect(keys(second)).toEqual(['a/ops/z', 'a/web/a']);
    const third = await schedules.waitingAfter(AT, second.at(-1), 2);
    expect(keys(third)).toEqual(['b/ops/x']);
    expect(await schedules.waitingAfter(AT, third.at(-1), 2)).toEqual([]);
  });

  it('moves nextRunAt only while the state is as it was read: a claim in between wins', async () => {
    const { schedules } = t.rt.repos;
    const key = { tenant: 'a', project: 'ops', name: 'job' };
    await schedules.upsert(state('a', 'ops', 'job', AT + 3_600_000), AT);
    expect(
      await schedules.replan(key, { nextRunAt: AT + 3_600_000, lastScheduledAt: null }, AT + 60_000, AT),
    ).toBe(true);
    expect(await schedules.get(key)).toMatchObject({ nextRunAt: AT + 60_000, lastScheduledAt: null });
    // Read before a claim moved it on (nextRunAt, lastScheduledAt): the replan writes nothing.
    await schedules.upsert(state('a', 'ops', 'job', AT + 120_000, AT + 60_000), AT);
    expect(
      await schedules.replan(key, { nextRunAt: AT + 120_000, lastScheduledAt: null }, AT + 90_000, AT),
    ).toBe(false);
    expect(
      await schedules.replan(key, { nextRunAt: AT + 60_000, lastScheduledAt: null }, AT + 90_000, AT),
    ).toBe(false);
    expect(await schedules.get(key)).toMatchObject({ nextRunAt: AT + 120_000, lastScheduledAt: AT + 60_000 });
    expect(
      await schedules.replan(key, { nextRunAt: AT + 120_000, lastScheduledAt: AT + 60_000 }, AT + 90_000, AT),
    ).toBe(true);
    expect(await schedules.get(key)).toMatchObject({ nextRunAt: AT + 90_000, lastScheduledAt: AT + 60_000 });
  });
});
