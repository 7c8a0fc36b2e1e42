import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { capturedLog, type LogLine } from '../support/faults.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
let running: Worker | undefined;
afterEach(async () => {
  await running?.stop();
  await t?.close();
  t = running = undefined;
});

async function setup(dialect: (typeof DIALECTS)[number], files: Record<string, string>) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
  return t;
}

async function runsOf(rt: Runtime, name: string) {
  return (await rt.repos.runs.listForScheduler(T, P, name, 100)).reverse();
}

/** The lines the loop logs for a jump of the wall clock (issue #20). */
const jumps = (lines: readonly LogLine[]) =>
  lines
    .filter((l) => typeof l.jumpMs === 'number')
    .map((l) => ({ level: l.level, direction: l.direction, jumpMs: l.jumpMs }));

async function feedOf(rt: Runtime, name: string) {
  return (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', name, 100)).reverse();
}

// issue #12, decisions §4: the wall clock jumps; sleeping is by timers (monotonic), deciding by the clock.
describe.each(DIALECTS)('wall-clock jumps on %s (issue #12, decisions §4)', (dialect) => {
  it('jumping forward an hour: the running loop catches up once per scheduler by its misfire policy, no storm', async () => {
    const t = await setup(dialect, {
      '_vance/scheduler/once.yaml': cronScheduler('*/10 * * * * *', 'noop'),
      '_vance/scheduler/skip.yaml': cronScheduler('*/10 * * * * *', 'noop', 'misfire: skip\n'),
    });
    const { log, lines } = capturedLog('info');
    running = t.worker({ acquireAheadMs: 0, maxSleepMs: 20 }, { ...t.rt, log });
    await running.start();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await until(async () => (await runsOf(t.rt, 'skip'))[0]?.state === 'ended', 'the 08:00:10 runs');
    await until(async () => (await runsOf(t.rt, 'once'))[0]?.state === 'ended', 'the 08:00:10 runs');

    t.clock.set(Date.parse('2026-06-01T09:00:15Z'));
    const ended = (n: number) => async (name: string) => {
      const runs = await runsOf(t.rt, name);
      return runs.length === n && runs.at(-1)?.state === 'ended';
    };
    await until(() => ended(2)('once'), 'the catch-up');
    await until(() => ended(3)('skip'), 'the newest run');
    await running.stop();
    running = undefined;

    // misfire: once — one run for the hour (359 occurrences), coalesced, at its oldest occurrence.
    const once = await runsOf(t.rt, 'once');
    expect(
      once.map((r) => [
        iso(r.scheduledFor),
        r.outcome,
        r.coalesced,
        r.coalescedUntil && iso(r.coalescedUntil),
      ]),
    ).toEqual([
      ['2026-06-01T08:00:10Z', 'completed', false, null],
      ['2026-06-01T08:00:20Z', 'completed', true, '2026-06-01T09:00:10Z'],
    ]);
    expect((await feedOf(t.rt, 'once')).map((l) => `${l.kind} ${l.outcome}`)).toEqual([
      'START pending',
      'END completed',
      'START pending',
      'END completed',
    ]);
    // misfire: skip — the newest missed occurrence (09:00:10, within the threshold) runs; one
    // SKIPPED line names the older ones and the reason (decisions §4, issue #20).
    const skip = await runsOf(t.rt, 'skip');
    expect(skip.map((r) => [iso(r.scheduledFor), r.outcome, r.reason])).toEqual([
      ['2026-06-01T08:00:10Z', 'completed', null],
      ['2026-06-01T08:00:20Z', 'skipped_misfire', 'misfire-threshold'],
      ['2026-06-01T09:00:10Z', 'completed', null],
    ]);
    const skipped = (await feedOf(t.rt, 'skip')).filter((l) => l.kind === 'SKIPPED');
    expect(skipped.map((l) => [l.outcome, l.payload.scheduledFor, l.payload.skippedLast])).toEqual([
      ['skipped_misfire', Date.parse('2026-06-01T08:00:20Z'), Date.parse('2026-06-01T09:00:00Z')],
    ]);
    for (const name of ['once', 'skip']) {
      const state = await t.rt.repos.schedules.get({ tenant: T, project: P, name });
      expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T09:00:20Z');
    }
    // issue #20: the jump is logged at warn with its size and direction (the steps of 10 s too);
    // forward, nothing is recomputed: the misfire policies decided above.
    const [hour] = jumps(lines).filter((j) => (j.jumpMs as number) > 60_000);
    expect(hour).toMatchObject({ level: 40, direction: 'forward' });
    expect(hour?.jumpMs).toBeGreaterThanOrEqual(3_595_000);
    expect(hour?.jumpMs).toBeLessThanOrEqual(3_605_000);
    expect(jumps(lines).every((j) => j.direction === 'forward')).toBe(true);
    expect(lines.some((l) => l.msg === 'next runs recomputed after the wall clock was set back')).toBe(false);
  });

  it('jumping back an hour while the loop runs: a scheduler fires at the next minute of the new now, not an hour later, and nothing claimed or absorbed runs again (issue #20)', {
    timeout: 20_000,
  }, async () => {
    const t = await setup(dialect, { '_vance/scheduler/ran.yaml': cronScheduler('0 * * * * *', 'noop') });
    const { log, lines } = capturedLog('info');
    running = t.worker({ acquireAheadMs: 0, maxSleepMs: 20 }, { ...t.rt, log });
    // The loop starts four minutes late: one run for 08:01, coalesced up to 08:05.
    t.clock.set(Date.parse('2026-06-01T08:05:00Z'));
    await running.start();
    await until(async () => (await runsOf(t.rt, 'ran'))[0]?.state === 'ended', 'the catch-up of ran');
    // A scheduler added at 08:05: its first occurrence is 08:06.
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/scheduler/ran.yaml': cronScheduler('0 * * * * *', 'noop'),
        '_vance/scheduler/fresh.yaml': cronScheduler('0 * * * * *', 'noop'),
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const state = (name: string) => t.rt.repos.schedules.get({ tenant: T, project: P, name });
    expect(iso((await state('fresh'))?.nextRunAt as number)).toBe('2026-06-01T08:06:00Z');

    // The wall clock is set back an hour.
    t.clock.set(Date.parse('2026-06-01T07:05:00Z'));
    await until(
      () => lines.some((l) => l.msg === 'next runs recomputed after the wall clock was set back'),
      'the recomputation',
    );
    // fresh waits for the next minute of the new time; ran claimed 08:01 and absorbed up to 08:05,
    // so it waits for 08:06 still, not for an occurrence it already served.
    expect(iso((await state('fresh'))?.nextRunAt as number)).toBe('2026-06-01T07:06:00Z');
    expect([
      iso((await state('ran'))?.nextRunAt as number),
      iso((await state('ran'))?.lastScheduledAt as number),
    ]).toEqual(['2026-06-01T08:06:00Z', '2026-06-01T08:01:00Z']);
    const [back] = jumps(lines);
    expect(back).toMatchObject({ level: 40, direction: 'back' });
    expect(back?.jumpMs).toBeGreaterThanOrEqual(3_600_000);
    expect(back?.jumpMs).toBeLessThan(3_610_000);
    expect(
      lines.find((l) => l.msg === 'next runs recomputed after the wall clock was set back'),
    ).toMatchObject({ looked: 2, replanned: 1 });

    t.clock.set(Date.parse('2026-06-01T07:06:00Z'));
    await until(async () => (await runsOf(t.rt, 'fresh'))[0]?.state === 'ended', 'the run of fresh at 07:06');
    await running.executor.settled();
    expect((await runsOf(t.rt, 'fresh')).map((r) => [iso(r.scheduledFor), r.outcome, r.coalesced])).toEqual([
      ['2026-06-01T07:06:00Z', 'completed', false],
    ]);
    expect(
      (await runsOf(t.rt, 'ran')).map((r) => [
        iso(r.scheduledFor),
        r.coalesced,
        r.coalescedUntil && iso(r.coalescedUntil),
      ]),
    ).toEqual([['2026-06-01T08:01:00Z', true, '2026-06-01T08:05:00Z']]);
  });

  it('jumping back an hour: nothing fires twice, a restart keeps the stored state, and it goes on where it was', async () => {
    const t = await setup(dialect, { '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    const worker = t.worker({ acquireAheadMs: 0 });
    await worker.bootstrap();
    for (const at of ['08:00:10', '08:00:20', '08:00:30']) {
      t.clock.set(Date.parse(`2026-06-01T${at}Z`));
      expect(await worker.tick()).toMatchObject({ claimed: 1, fired: 1 });
      await worker.executor.settled();
    }

    // Back an hour: the stored nextRunAt (08:00:40) is ahead of the clock, so nothing is due — not
    // 07:00:40, nor again 08:00:10 when the clock gets there.
    t.clock.set(Date.parse('2026-06-01T07:00:31Z'));
    expect(await worker.tick()).toMatchObject({ due: 0, claimed: 0 });
    // A restart an hour back (bootstrap refreshes every project): unchanged timing keeps the state.
    const restarted = t.worker({ acquireAheadMs: 0 }, await t.peer());
    await restarted.bootstrap();
    for (const at of ['07:00:40', '07:30:00', '08:00:10', '08:00:30']) {
      t.clock.set(Date.parse(`2026-06-01T${at}Z`));
      expect(await restarted.tick(), at).toMatchObject({ due: 0, claimed: 0 });
    }
    const state = await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'job' });
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T08:00:40Z');
    expect(iso(state?.lastScheduledAt as number)).toBe('2026-06-01T08:00:30Z');

    // The clock reaches the stored occurrence again: it fires once, on time, not coalesced.
    t.clock.set(Date.parse('2026-06-01T08:00:40Z'));
    expect(await restarted.tick()).toEqual({ due: 1, claimed: 1, coalesced: 0, fired: 1, skipped: 0 });
    await restarted.executor.settled();
    const runs = await runsOf(t.rt, 'job');
    expect(runs.map((r) => [iso(r.scheduledFor), r.outcome, r.coalesced])).toEqual([
      ['2026-06-01T08:00:10Z', 'completed', false],
      ['2026-06-01T08:00:20Z', 'completed', false],
      ['2026-06-01T08:00:30Z', 'completed', false],
      ['2026-06-01T08:00:40Z', 'completed', false],
    ]);
  });

  it('a clock set back an hour while a run waits for its instant: it waits by the clock, and starts once the clock is back', async () => {
    const t = await setup(dialect, { '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    // Count the clock's reads, to know when the waiting run has looked at it.
    let reads = 0;
    const clock = {
      now: () => {
        reads++;
        return t.clock.now();
      },
    };
    const rt: Runtime = { ...t.rt, clock };
    const worker = t.worker({}, rt);
    await worker.bootstrap();
    // Claimed 400 ms ahead of 08:00:10 (the fire-ahead window), to start at its instant.
    t.clock.set(Date.parse('2026-06-01T08:00:09.600Z'));
    expect(await worker.tick(500)).toMatchObject({ claimed: 1, fired: 1 });
    t.clock.set(Date.parse('2026-06-01T07:00:09.600Z'));
    const before = reads;
    // The waiting run reads the clock again after its timer, sees the instant an hour away, and waits on.
    await until(() => reads > before + 1, 'the waiting run reading the clock');
    let [run] = await runsOf(t.rt, 'job');
    expect(run?.state).toBe('claimed');

    // The clock is put right: the run starts within one capped timer (1 s), not an hour of timer later.
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await until(async () => (await runsOf(t.rt, 'job'))[0]?.state === 'ended', 'the run at its instant');
    await worker.executor.settled();
    [run] = await runsOf(t.rt, 'job');
    expect(run).toMatchObject({ outcome: 'completed', coalesced: false });
    expect(iso(run?.startedAt as number)).toBe('2026-06-01T08:00:10Z');
    expect(await runsOf(t.rt, 'job')).toHaveLength(1);
  });
});
