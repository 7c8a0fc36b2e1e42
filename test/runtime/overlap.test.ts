import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { listSchedulers } from '../../src/service/listing.js';
import { runDetail, schedulerRunPage } from '../../src/service/run-views.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const RECIPE = 'description: held by the test\nengine: held\n';
const scheduler = (overlap: string, cron = '*/10 * * * * *') =>
  `description: overlap test\ncron: "${cron}"\nrecipe: held\noverlap: ${overlap}\n`;

async function setup(dialect: (typeof DIALECTS)[number], overlap: string) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  await applyDirectory(
    t.rt,
    projectFolder({ '_vance/recipes/held.yaml': RECIPE, '_vance/scheduler/job.yaml': scheduler(overlap) }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  return { t, engine, worker };
}

async function tickAt(t: TestRuntime, worker: Worker, at: string) {
  t.clock.set(Date.parse(at));
  await worker.heartbeat();
  return worker.tick();
}

async function runs(rt: Runtime) {
  const list = await rt.repos.runs.listForScheduler(T, P, 'job', 50);
  return list.map((r) => [iso(r.scheduledFor).slice(11, 19), r.trigger, r.state, r.outcome]).reverse();
}

async function feed(rt: Runtime) {
  return (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100))
    .map((l) => `${l.kind} ${l.outcome}`)
    .reverse();
}

async function runState(rt: Runtime, scheduledFor: string) {
  const all = await rt.repos.runs.listForScheduler(T, P, 'job', 50);
  return all.find((r) => iso(r.scheduledFor) === scheduledFor)?.state;
}

// spec §5: the overlap table, row by row, with a test engine whose processes end when the test says.
describe.each(DIALECTS)('overlap policies on %s (spec §5)', (dialect) => {
  it('skip: a tick while the previous run is active is not started, and says so', async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    const held = await first;
    await tickAt(t, worker, '2026-06-01T08:00:20Z');
    await until(
      async () => (await runState(t.rt, '2026-06-01T08:00:20Z')) === 'skipped',
      'the second run is skipped',
    );
    held.finish();
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      ['08:00:10', 'cron', 'ended', 'completed'],
      ['08:00:20', 'cron', 'skipped', 'skipped_overlap'],
    ]);
    expect(await feed(t.rt)).toEqual(['START pending', 'SKIPPED skipped_overlap', 'END completed']);
    const skipped = (await t.rt.repos.runs.listForScheduler(T, P, 'job', 5)).find(
      (r) => r.outcome === 'skipped_overlap',
    );
    expect(skipped?.reason).toBe('overlap');
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: skipped?.logPath as string });
    expect(log?.body).toContain('outcome: skipped_overlap');
    expect(engine.processes).toHaveLength(1);
  });

  it('queue: holds one waiting run, consolidates a third tick into it, and starts it when the first ends', async () => {
    const { t, engine, worker } = await setup(dialect, 'queue');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    const one = await first;
    await tickAt(t, worker, '2026-06-01T08:00:20Z');
    await until(
      async () => (await runState(t.rt, '2026-06-01T08:00:20Z')) === 'queued',
      'the second run waits',
    );
    await tickAt(t, worker, '2026-06-01T08:00:30Z');
    await until(
      async () => (await runState(t.rt, '2026-06-01T08:00:30Z')) === 'skipped',
      'the third is consolidated',
    );
    const second = engine.started();
    one.finish({ status: 'failed', reason: 'boom' });
    const two = await second;
    expect(two.request.context.scheduledFor).toBe(Date.parse('2026-06-01T08:00:20Z'));
    two.finish();
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      ['08:00:10', 'cron', 'ended', 'failed'],
      ['08:00:20', 'cron', 'ended', 'completed'],
      ['08:00:30', 'cron', 'skipped', 'skipped_overlap_queued'],
    ]);
  });

  it("the list's last run shows where a running run is, then how it ended (issue #23: it said pending)", async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    const one = await first;
    const lastRun = async () => (await listSchedulers(t.rt, T, P)).schedulers[0]?.lastRun;
    expect(await lastRun()).toMatchObject({ state: 'running', outcome: 'pending' });
    one.finish();
    await worker.executor.settled();
    expect(await lastRun()).toMatchObject({ state: 'ended', outcome: 'completed' });
  });

  it('queue: a waiting run and the fire folded into it link both ways in the run list, the feed and the run logs (issue #23)', async () => {
    const { t, engine, worker } = await setup(dialect, 'queue');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    const one = await first;
    await tickAt(t, worker, '2026-06-01T08:00:20Z');
    await until(
      async () => (await runState(t.rt, '2026-06-01T08:00:20Z')) === 'queued',
      'the second run waits',
    );
    t.clock.set(Date.parse('2026-06-01T08:00:25Z'));
    const fired = await fireScheduler(t.rt, T, P, 'job');
    await worker.reap();
    // Its skip is recorded, then its run log rewritten: both are waited for.
    await until(
      async () => (await runDetail(t.rt, T, P, fired.correlationId))?.log?.includes('SKIPPED') === true,
      'the fire is folded into the waiting run',
    );
    const [active, waiting] = (await t.rt.repos.runs.listForScheduler(T, P, 'job', 50))
      .filter((r) => r.trigger === 'cron')
      .reverse();
    if (active === undefined || waiting === undefined) throw new Error('two cron runs expected');

    // While it waits: the list shows it queued behind the active run, with the fire folded in.
    const listed = (await schedulerRunPage(t.rt, T, P, 'job', { limit: 10 })).runs;
    expect(listed.map((r) => [r.trigger, r.state, r.waitingBehind, r.foldedInto, r.folded])).toEqual([
      ['manual', 'skipped', null, waiting.correlationId, null],
      ['cron', 'queued', active.correlationId, null, { count: 1, first: [fired.correlationId] }],
      ['cron', 'running', null, null, null],
    ]);
    const skippedLine = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 10)).find(
      (l) => l.traceId === fired.correlationId,
    );
    expect(skippedLine).toMatchObject({ kind: 'SKIPPED', outcome: 'skipped_overlap_queued' });
    expect(skippedLine?.payload.foldedInto).toBe(waiting.correlationId);
    const foldedLog = (await runDetail(t.rt, T, P, fired.correlationId))?.log ?? '';
    expect(foldedLog).toContain(`folded into ${waiting.correlationId}, which was already waiting`);

    // After it ran: its log still tells the wait and the fold, and its START line whom it waited behind.
    const second = engine.started();
    one.finish();
    const two = await second;
    // Its log is rewritten at its start, not only at its end (found by a newcomer: it said QUEUED
    // while the run ran).
    await until(
      async () => (await runDetail(t.rt, T, P, waiting.correlationId))?.log?.includes('STARTED') === true,
      'the started run log',
    );
    expect((await runDetail(t.rt, T, P, waiting.correlationId))?.log).toMatch(
      /QUEUED[^\n]*\n(.*\n)*.*STARTED/,
    );
    two.finish();
    await worker.executor.settled();
    const detail = await runDetail(t.rt, T, P, waiting.correlationId);
    expect(detail).toMatchObject({
      state: 'ended',
      outcome: 'completed',
      queuedAt: '2026-06-01T08:00:20Z',
      waitingBehind: active.correlationId,
      folded: { count: 1, first: [fired.correlationId] },
    });
    const log = detail?.log ?? '';
    expect(log).toContain(`waitingBehind: ${active.correlationId}`);
    expect(log).toContain(`2026-06-01T08:00:20Z  QUEUED     waiting behind ${active.correlationId}`);
    expect(log).toMatch(
      new RegExp(`FOLDED     ${fired.correlationId} \\(manual, for [^)]+\\) was folded into this run`),
    );
    expect(log.indexOf('QUEUED')).toBeLessThan(log.indexOf('STARTED'));
    const start = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 20)).find(
      (l) => l.traceId === waiting.correlationId && l.kind === 'START',
    );
    expect(start?.payload).toMatchObject({
      waitingBehind: active.correlationId,
      queuedAt: Date.parse('2026-06-01T08:00:20Z'),
    });
  });

  it('cancelPrevious: stops the active run (reason scheduler-overlap, END cancelled), then starts the new one', async () => {
    const { t, engine, worker } = await setup(dialect, 'cancelPrevious');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    const one = await first;
    const second = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:20Z');
    expect(await one.stopped).toBe('scheduler-overlap');
    const two = await second;
    two.finish();
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      ['08:00:10', 'cron', 'ended', 'cancelled'],
      ['08:00:20', 'cron', 'ended', 'completed'],
    ]);
    const [firstRun] = (await t.rt.repos.runs.listForScheduler(T, P, 'job', 5)).slice(-1);
    expect(firstRun?.reason).toBe('scheduler-overlap');
    expect(await t.rt.repos.processes.get(firstRun?.processId as string)).toMatchObject({
      status: 'stopped',
      reason: 'scheduler-overlap',
    });
    expect(await feed(t.rt)).toEqual(['START pending', 'END cancelled', 'START pending', 'END completed']);
  });

  it('a manual fire while a run is active obeys the policy (skip), with trigger manual (spec §9)', async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    const held = await first;
    t.clock.set(Date.parse('2026-06-01T08:00:12Z'));
    const fired = await fireScheduler(t.rt, T, P, 'job');
    expect(fired.correlationId).toMatch(/^run_/);
    expect(fired.logPath).toBe(`_vance/logs/scheduler/job/20260601T080012Z-${fired.correlationId}.md`);
    const pending = await t.rt.repos.documents.get({ tenant: T, project: P, path: fired.logPath });
    expect(pending?.body).toContain('trigger: manual');
    expect(pending?.body).toContain('outcome: pending');
    await worker.reap();
    await until(
      async () => (await t.rt.repos.runs.get(fired.correlationId))?.state === 'skipped',
      'the manual run is skipped',
    );
    held.finish();
    await worker.executor.settled();
    expect(await runs(t.rt)).toEqual([
      ['08:00:10', 'cron', 'ended', 'completed'],
      ['08:00:12', 'manual', 'skipped', 'skipped_overlap'],
    ]);
    // A manual fire leaves the schedule where it was.
    expect(
      iso((await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'job' }))?.nextRunAt as number),
    ).toBe('2026-06-01T08:00:20Z');
  });

  it('a manual fire with nothing active starts at once', async () => {
    const { t, engine, worker } = await setup(dialect, 'skip');
    t.clock.set(Date.parse('2026-06-01T08:00:03Z'));
    const started = engine.started();
    const fired = await fireScheduler(t.rt, T, P, 'job');
    await worker.reap();
    (await started).finish();
    await worker.executor.settled();
    expect(await t.rt.repos.runs.get(fired.correlationId)).toMatchObject({
      trigger: 'manual',
      outcome: 'completed',
    });
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: fired.logPath });
    expect(log?.body).toContain('trigger: manual');
    expect(log?.body).toContain('outcome: completed');
  });

  it('a queued run survives a restart and starts when its lane is free', async () => {
    const { t, engine, worker } = await setup(dialect, 'queue');
    const first = engine.started();
    await tickAt(t, worker, '2026-06-01T08:00:10Z');
    await first;
    await tickAt(t, worker, '2026-06-01T08:00:20Z');
    await until(
      async () => (await runState(t.rt, '2026-06-01T08:00:20Z')) === 'queued',
      'the second run waits',
    );

    // The process crashes with everything in it; a new one starts on the same store.
    const rt = await t.peer();
    const engine2 = controlledEngine();
    rt.engines.register(engine2);
    const next = engine2.started();
    const restarted = t.worker({ exclusive: true }, rt);
    await restarted.bootstrap();
    const resumed = await next;
    expect(resumed.request.context.scheduledFor).toBe(Date.parse('2026-06-01T08:00:20Z'));
    resumed.finish();
    await restarted.executor.settled();
    const after = (await rt.repos.runs.listForScheduler(T, P, 'job', 5)).map((r) => [
      iso(r.scheduledFor).slice(11, 19),
      r.outcome,
      r.reason,
    ]);
    expect(after.reverse()).toEqual([
      ['08:00:10', 'failed', 'worker-lost'],
      ['08:00:20', 'completed', null],
    ]);
    engine.processes[0]?.finish();
    await worker.executor.settled();
  });
});
