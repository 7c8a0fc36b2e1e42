import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import type { Caller } from '../../src/service/caller.js';
import { deleteScheduler, setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const DUE = Date.parse('2026-06-01T08:00:10Z');
const alice: Caller = { tenant: T, project: P, user: 'alice', role: 'admin' };
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const RECIPE = 'description: held by the test\nengine: held\n';
const cron = (overlap: string, extra = '') =>
  `description: withdrawn test\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: held\noverlap: ${overlap}\n${extra}`;
const oneShot = (extra = '') =>
  `description: withdrawn test\nat: "${iso(DUE)}"\ntimezone: UTC\nrecipe: held\n${extra}`;

/** A project whose scheduler `job` runs the controlled engine (its processes are the engine's record). */
async function setup(dialect: (typeof DIALECTS)[number], scheduler: string) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  const folder = projectFolder({
    '_vance/recipes/held.yaml': RECIPE,
    '_vance/scheduler/job.yaml': scheduler,
  });
  await applyDirectory(t.rt, folder, T, P, libraryActor('alice'));
  rmSync(folder, { recursive: true, force: true });
  const worker = t.worker();
  await worker.bootstrap();
  return { t, engine, worker };
}

/** Claims the occurrence due at DUE 300 ms ahead of it: its start waits for the instant. */
async function claimAhead(t: TestRuntime, worker: Worker) {
  t.clock.set(DUE - 300);
  await worker.heartbeat();
  expect(await worker.tick(500)).toMatchObject({ claimed: 1, fired: 1 });
}

async function runAt(rt: Runtime, at: number) {
  return (await rt.repos.runs.listForScheduler(T, P, 'job', 20)).find((r) => r.scheduledFor === at);
}

async function lines(rt: Runtime, traceId: string) {
  return (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100))
    .filter((l) => l.traceId === traceId)
    .map((l) => `${l.kind} ${l.outcome} ${String(l.payload.reason ?? '')}`.trim())
    .reverse();
}

/** The run at `at` ended skipped with `outcome` and `reason`, said in its feed line and its run log. */
async function expectSkipped(rt: Runtime, at: number, outcome: string, reason: string) {
  const logOf = async () => {
    const run = await runAt(rt, at);
    return run === undefined
      ? undefined
      : rt.repos.documents.get({ tenant: T, project: P, path: run.logPath });
  };
  await until(
    async () => (await logOf())?.body.includes(`outcome: ${outcome}`) === true,
    'the run is recorded skipped',
  );
  const run = await runAt(rt, at);
  expect(run).toMatchObject({ state: 'skipped', outcome, reason, startedAt: null, processId: null });
  expect(await lines(rt, run?.correlationId as string)).toEqual([`SKIPPED ${outcome} ${reason}`]);
  const log = await rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath as string });
  expect(log?.body).toContain(`outcome: ${outcome}`);
  expect(log?.body).toContain(`reason: ${reason}`);
}

// issue #20: a scheduler deleted or disabled after one of its occurrences was claimed ahead of
// its instant, or while a run of it waits in its queue, does not start that run: the lane looks at
// the schedule at the instant, and the run is recorded skipped with the reason.
describe.each(DIALECTS)('a scheduler withdrawn before its run starts, on %s (issue #20)', (dialect) => {
  it('deleted while its occurrence is claimed ahead (a batch start): not started, skipped scheduler-deleted', async () => {
    const { t, engine, worker } = await setup(dialect, cron('skip'));
    await claimAhead(t, worker);
    await deleteScheduler(t.rt, alice, 'job');
    t.clock.set(DUE);
    await expectSkipped(t.rt, DUE, 'skipped_deleted', 'scheduler-deleted');
    await worker.executor.settled();
    expect(engine.processes).toHaveLength(0);
    expect(await t.store.db.selectFrom('processes').select('id').execute()).toEqual([]);
    // Its sessions were archived by the delete, and no new one was opened for the skipped run.
    const sessions = await t.store.db.selectFrom('sessions').select(['name', 'status']).execute();
    expect(sessions.filter((s) => s.status !== 'archived')).toEqual([]);
  });

  it('disabled while its occurrence is claimed ahead (a batch start): not started, skipped scheduler-disabled', async () => {
    const { t, engine, worker } = await setup(dialect, cron('skip'));
    await claimAhead(t, worker);
    await setScheduler(t.rt, alice, 'job', cron('skip', 'enabled: false\n'));
    t.clock.set(DUE);
    await expectSkipped(t.rt, DUE, 'skipped_disabled', 'scheduler-disabled');
    await worker.executor.settled();
    expect(engine.processes).toHaveLength(0);
  });

  it('a one-shot deleted while claimed ahead (a start of its own): not started, skipped scheduler-deleted', async () => {
    const { t, engine, worker } = await setup(dialect, oneShot());
    await claimAhead(t, worker);
    await deleteScheduler(t.rt, alice, 'job');
    t.clock.set(DUE);
    await expectSkipped(t.rt, DUE, 'skipped_deleted', 'scheduler-deleted');
    await worker.executor.settled();
    expect(engine.processes).toHaveLength(0);
  });

  it('disabled while a run waits in its queue: the waiting run does not start when the lane frees', async () => {
    const { t, engine, worker } = await setup(dialect, cron('queue'));
    const first = engine.started();
    t.clock.set(DUE);
    await worker.tick();
    const active = await first;
    t.clock.set(DUE + 10_000);
    await worker.tick();
    await until(async () => (await runAt(t.rt, DUE + 10_000))?.state === 'queued', 'the second run waits');

    await setScheduler(t.rt, alice, 'job', cron('queue', 'enabled: false\n'));
    active.finish();
    await expectSkipped(t.rt, DUE + 10_000, 'skipped_disabled', 'scheduler-disabled');
    await worker.executor.settled();
    expect(engine.processes).toHaveLength(1);
    expect((await runAt(t.rt, DUE))?.outcome).toBe('completed');
  });

  it('deleted while a run waits in its queue: the waiting run does not start when the lane frees', async () => {
    const { t, engine, worker } = await setup(dialect, cron('queue'));
    const first = engine.started();
    t.clock.set(DUE);
    await worker.tick();
    const active = await first;
    t.clock.set(DUE + 10_000);
    await worker.tick();
    await until(async () => (await runAt(t.rt, DUE + 10_000))?.state === 'queued', 'the second run waits');

    await deleteScheduler(t.rt, alice, 'job');
    active.finish();
    await expectSkipped(t.rt, DUE + 10_000, 'skipped_deleted', 'scheduler-deleted');
    await worker.executor.settled();
    expect(engine.processes).toHaveLength(1);
  });

  it('deleted while a run waits in its queue and its worker dies: the next worker does not start it', async () => {
    const { t, engine, worker } = await setup(dialect, cron('queue'));
    const first = engine.started();
    t.clock.set(DUE);
    await worker.tick();
    const active = await first;
    t.clock.set(DUE + 10_000);
    await worker.tick();
    await until(async () => (await runAt(t.rt, DUE + 10_000))?.state === 'queued', 'the second run waits');
    await deleteScheduler(t.rt, alice, 'job');

    // The worker dies with everything in it; the next one finds the active run lost and the
    // waiting one's scheduler gone.
    const rt = await t.peer();
    const next = controlledEngine();
    rt.engines.register(next);
    t.clock.set(DUE + 20_000);
    const restarted = t.worker({ exclusive: true, leaseTtlMs: 5_000 }, rt);
    await restarted.bootstrap();
    await restarted.executor.settled();
    expect((await runAt(rt, DUE))?.reason).toBe('worker-lost');
    await expectSkipped(rt, DUE + 10_000, 'skipped_deleted', 'scheduler-deleted');
    expect(next.processes).toHaveLength(0);
    // Looked at again, it stays skipped: nothing takes it over at every pass.
    await restarted.reap();
    expect((await runAt(rt, DUE + 10_000))?.state).toBe('skipped');
    active.finish();
    await worker.executor.settled();
  });
});
