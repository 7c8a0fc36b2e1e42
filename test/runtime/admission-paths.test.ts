import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { backfillScheduler } from '../../src/service/backfill.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #22, one admission order: a manual fire, a catch-up, a backfill and a retry all meet the
// overlap policy and the run budget, as a scheduled run does. The engine is held by the test, so
// what runs at once is what the processes did.

const T = 'acme';
const P = 'ops';
const alice = { tenant: T, project: P, user: 'alice', role: 'write' } as const;
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const at = (text: string) => Date.parse(text);

async function setup(dialect: (typeof DIALECTS)[number], settings = {}) {
  t = await testRuntime('2026-06-01T08:59:59Z', { dialect, settings });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/job.yaml':
        'description: every ten minutes\ncron: "0 */10 * * * *"\nrecipe: held\noverlap: skip\nretry: {attempts: 2, backoff: PT10S}\n',
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  return { t, engine, worker };
}

async function runs(rt: Runtime) {
  const list = await rt.repos.runs.listForScheduler(T, P, 'job', 50);
  return list
    .map(
      (r) =>
        `${r.trigger === 'manual' ? 'manual' : iso(r.scheduledFor).slice(11, 16)} ${r.trigger} ${r.outcome}`,
    )
    .sort();
}

const outcomeOf = async (rt: Runtime, correlationId: string) =>
  (await rt.repos.runs.get(correlationId))?.outcome;

describe.each(DIALECTS)('every path to a start on %s (issue #22)', (dialect) => {
  it('a manual fire, a catch-up, a backfill and a retry meet the overlap policy: never two at once', async () => {
    const { t, engine, worker } = await setup(dialect);
    const active = () => engine.processes.length - finished;
    let finished = 0;
    const first = engine.started();
    t.clock.set(at('2026-06-01T09:00:00Z'));
    await worker.tick();
    const attempt1 = await first;
    // A manual fire while 09:00 runs: skipped by the policy.
    t.clock.set(at('2026-06-01T09:00:05Z'));
    const fire = await fireScheduler(t.rt, T, P, 'job');
    await worker.reap();
    await until(
      async () => (await outcomeOf(t.rt, fire.correlationId)) === 'skipped_overlap',
      'fire skipped',
    );
    // A backfill waits for the lane.
    await backfillScheduler(t.rt, alice, 'job', { from: '2026-06-01T08:00:00Z', to: '2026-06-01T08:10:00Z' });
    await worker.reap();
    expect(active()).toBe(1);
    // 09:00 fails: it keeps its lane through its backoff, so a fire meanwhile is skipped too.
    attempt1.finish({ status: 'failed', reason: 'boom' });
    finished++;
    await until(async () => worker.executor.waitingForInstant === 1, 'the retry waits');
    const fire2 = await fireScheduler(t.rt, T, P, 'job');
    await worker.reap();
    await until(
      async () => (await outcomeOf(t.rt, fire2.correlationId)) === 'skipped_overlap',
      'fire 2 skipped',
    );
    expect(active()).toBe(0);
    // The retry, through the lane, 10 s after the failure.
    const second = engine.started();
    t.clock.set(at('2026-06-01T09:00:15Z'));
    const attempt2 = await second;
    expect(attempt2.request.context.attempt).toBe(2);
    // The schedule fell behind while the retry runs: the catch-up run is skipped by the policy.
    t.clock.set(at('2026-06-01T09:35:00Z'));
    await worker.heartbeat();
    await worker.tick();
    await until(
      async () => (await runs(t.rt)).some((r) => r.endsWith('cron skipped_overlap')),
      'catch-up skipped',
    );
    expect(active()).toBe(1);
    // 09:00 completes; the backfill then runs its occurrences, one after another.
    let next = engine.started();
    attempt2.finish();
    finished++;
    await until(async () => (await runs(t.rt)).includes('09:00 cron completed'), '09:00 completed');
    await worker.reap();
    for (const occurrence of ['08:00', '08:10']) {
      const p = await next;
      expect(iso(p.request.context.scheduledFor).slice(11, 16)).toBe(occurrence);
      expect(active()).toBe(1);
      next = engine.started();
      p.finish();
      finished++;
    }
    await worker.executor.settled();
    const catchUp = (await runs(t.rt)).find((r) => r.endsWith('cron skipped_overlap'));
    expect(await runs(t.rt)).toEqual(
      [
        '08:00 backfill completed',
        '08:10 backfill completed',
        '09:00 cron completed',
        catchUp,
        'manual manual skipped_overlap',
        'manual manual skipped_overlap',
      ].sort(),
    );
    await worker.stop();
  });

  it('a manual fire, a catch-up, a backfill and a retry count against the run budget', async () => {
    const { t, engine, worker } = await setup(dialect, { budget: { runsPerHour: 1, runsPerDay: undefined } });
    const first = engine.started();
    t.clock.set(at('2026-06-01T09:00:00Z'));
    await worker.tick();
    (await first).finish({ status: 'failed', reason: 'boom' });
    await until(async () => worker.executor.waitingForInstant === 1, 'the retry waits');
    // The retry is over the budget (the first attempt spent it): the run ends failed.
    t.clock.set(at('2026-06-01T09:00:10Z'));
    await until(async () => (await runs(t.rt)).includes('09:00 cron failed'), '09:00 ended failed');
    t.clock.set(at('2026-06-01T09:00:20Z'));
    const fire = await fireScheduler(t.rt, T, P, 'job');
    await backfillScheduler(t.rt, alice, 'job', { from: '2026-06-01T08:00:00Z', to: '2026-06-01T08:20:00Z' });
    await worker.reap();
    await until(async () => (await outcomeOf(t.rt, fire.correlationId)) === 'skipped_budget', 'fire refused');
    t.clock.set(at('2026-06-01T09:35:00Z'));
    await worker.heartbeat();
    await worker.tick();
    await worker.reap();
    await worker.executor.settled();
    const all = await runs(t.rt);
    const catchUp = all.find((r) => r.includes(' cron ') && !r.startsWith('09:00'));
    expect(catchUp).toMatch(/ cron skipped_budget$/);
    // The backfill paces itself: its occurrences wait for room in the budget, not skipped.
    expect(all).toEqual(
      [
        '08:00 backfill pending',
        '08:10 backfill pending',
        '08:20 backfill pending',
        '09:00 cron failed',
        catchUp,
        'manual manual skipped_budget',
      ].sort(),
    );
    // What the processes did: one attempt, no more.
    expect(engine.processes).toHaveLength(1);
    // The hour after 09:00's start has room for one more: the oldest backfill occurrence runs; the
    // next waits again.
    const backfilled = engine.started();
    t.clock.set(at('2026-06-01T10:00:01Z'));
    await worker.reap();
    const p = await backfilled;
    expect(iso(p.request.context.scheduledFor)).toBe('2026-06-01T08:00:00Z');
    p.finish();
    await until(async () => (await runs(t.rt)).includes('08:00 backfill completed'), '08:00 completed');
    await worker.reap();
    await worker.executor.settled();
    expect((await runs(t.rt)).filter((r) => r.includes('backfill'))).toEqual([
      '08:00 backfill completed',
      '08:10 backfill pending',
      '08:20 backfill pending',
    ]);
    expect(engine.processes).toHaveLength(2);
    await worker.stop();
  });
});
