import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { SimulatedCrash } from '../../src/runtime/faults.js';
import { refreshProject } from '../../src/runtime/registrar.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { repositories } from '../../src/store/index.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { capturedLog, expectStartedAndEndedOnce, type LogLine } from '../support/faults.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { type SelectFaults, selectFaults, storeFailure } from '../support/select-faults.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const KEY = { tenant: T, project: P, name: 'job' };
const at = (time: string) => Date.parse(`2026-06-01T${time}Z`);

let t: TestRuntime | undefined;
const workers: Worker[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const worker of workers.splice(0)) await worker.stop();
  await t?.close();
  t = undefined;
});

async function setup(dialect: (typeof DIALECTS)[number], files: Record<string, string>) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
  return t;
}

/**
 * A second runtime on the test's database and clock whose SELECTs can be made to fail, with its
 * log kept (warn and above).
 */
async function faultyPeer(t: TestRuntime): Promise<{ rt: Runtime; faults: SelectFaults; lines: LogLine[] }> {
  const peer = await t.peer();
  const faults = selectFaults(peer.repos.store);
  const { log, lines } = capturedLog('warn');
  return { rt: { ...peer, repos: repositories(faults.store), log }, faults, lines };
}

async function runsOf(rt: Runtime) {
  return (await rt.repos.runs.listForScheduler(T, P, 'job', 50)).reverse();
}

async function invalidItems(t: TestRuntime) {
  return t.store.db
    .selectFrom('inbox')
    .select(['kind', 'title'])
    .where('kind', '=', 'document-invalid')
    .execute();
}

const loopErrors = (lines: readonly LogLine[]) =>
  lines.filter((l) => l.msg === 'scheduler loop error; retrying').map((l) => l.err?.code);

// issue #20 item 6: a store error (busy, unavailable) while a scheduler is loaded says nothing about
// its document. It never ends a run scheduler-gone, never removes schedule state, never sends an
// invalid-document inbox item: the pass fails and the next one does the work.
describe.each(DIALECTS)('a store error while loading a scheduler on %s (issue #20)', (dialect) => {
  const code = storeFailure(dialect).code;

  it('reap: a run taken over from a lost worker stays claimed and is started, never ended scheduler-gone', {
    timeout: 20_000,
  }, async () => {
    const t = await setup(dialect, { '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    // The first worker claims 08:00:10 and dies before it dispatches it.
    const lost = t.worker({
      acquireAheadMs: 0,
      faults: {
        afterClaim: () => {
          throw new SimulatedCrash('died after the claim');
        },
      },
    });
    await lost.bootstrap();
    t.clock.set(at('08:00:10'));
    await expect(lost.tick()).rejects.toBeInstanceOf(SimulatedCrash);
    expect((await runsOf(t.rt)).map((r) => r.state)).toEqual(['claimed']);

    // Its successor takes the run over; the check of its scheduler (the runAs lookup) meets the store error.
    const { rt, faults, lines } = await faultyPeer(t);
    faults.failNext('users', () => storeFailure(dialect));
    const successor = t.worker({ exclusive: true, acquireAheadMs: 0, maxSleepMs: 20 }, rt);
    workers.push(successor);
    await successor.start();
    await until(async () => (await runsOf(t.rt))[0]?.state === 'ended', 'the run taken over ends');
    await successor.executor.settled();

    expect(faults.failed).toBe(1);
    const runs = await runsOf(t.rt);
    expect(runs.map((r) => [iso(r.scheduledFor), r.outcome, r.reason, r.workerId])).toEqual([
      ['2026-06-01T08:00:10Z', 'completed', null, successor.id],
    ]);
    await expectStartedAndEndedOnce(
      t.store,
      runs.map((r) => ({ correlation_id: r.correlationId })),
    );
    // The reap left the run claimed and went on (its own runs, where it found the run again), then
    // failed its pass with the store error, as any store error does.
    expect(loopErrors(lines)).toEqual([code]);
  });

  it('promotion: a waiting run whose scheduler cannot be read stays queued and gets its turn at the next pass', {
    timeout: 20_000,
  }, async () => {
    const t = await setup(dialect, {
      '_vance/recipes/held.yaml': 'description: held by the test\nengine: held\n',
      '_vance/scheduler/job.yaml':
        'description: queue\ncron: "*/10 * * * * *"\nrecipe: held\noverlap: queue\n',
    });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    cleanups.push(async () => {
      for (const p of engine.processes) p.finish();
      await lost.executor.settled();
    });
    // The first worker runs 08:00:10 and queues 08:00:20 behind it, then stops renewing its lease.
    const lost = t.worker({ acquireAheadMs: 0 });
    await lost.bootstrap();
    const first = engine.started();
    t.clock.set(at('08:00:10'));
    await lost.heartbeat();
    await lost.tick();
    await first;
    t.clock.set(at('08:00:20'));
    await lost.heartbeat();
    await lost.tick();
    await until(async () => (await runsOf(t.rt))[1]?.state === 'queued', 'the second run waits');

    // A second worker runs its loop on the same store, on a clock the test holds still.
    const { rt, faults, lines } = await faultyPeer(t);
    const engine2 = controlledEngine();
    rt.engines.register(engine2);
    cleanups.push(() => {
      for (const p of engine2.processes) p.finish();
    });
    const successor = t.worker({ acquireAheadMs: 0, maxSleepMs: 20 }, rt);
    workers.push(successor);
    await successor.start();
    // The first worker's lease lapses: the successor ends its run worker-lost and promotes the
    // waiting one, whose scheduler check (the runAs lookup) meets the store error — twice: at the
    // promotion after the lost run's end, and at the reap's look for waiting runs after it.
    faults.failNext('users', () => storeFailure(dialect), { count: 2 });
    // Past the lease and the takeover margin (7 s) of its last heartbeat at 08:00:20.
    t.clock.set(at('08:00:28'));
    // Without moving the clock again: the next pass looks at the waiting run again.
    await until(() => engine2.processes.length > 0, "the waiting run's turn");
    const [promoted] = engine2.processes;
    expect(promoted?.request.context.scheduledFor).toBe(at('08:00:20'));
    promoted?.finish();
    await until(async () => (await runsOf(t.rt))[1]?.state === 'ended', 'the waiting run ends');

    expect(faults.failed).toBe(2);
    expect((await runsOf(t.rt)).map((r) => [iso(r.scheduledFor), r.outcome, r.reason])).toEqual([
      ['2026-06-01T08:00:10Z', 'failed', 'worker-lost'],
      ['2026-06-01T08:00:20Z', 'completed', null],
    ]);
    // The reap went on with the rest, then failed its pass as any store error does; the next
    // pass promoted the run.
    expect(loopErrors(lines)).toEqual([code]);
  });

  it('refresh: the refresh fails with the store error; the state stays and no inbox hears of an invalid document', async () => {
    const t = await setup(dialect, { '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    const before = await t.rt.repos.schedules.get(KEY);
    expect(before?.nextRunAt).toBe(at('08:00:10'));
    const { rt, faults } = await faultyPeer(t);
    faults.failNext('users', () => storeFailure(dialect));
    await expect(refreshProject(rt, T, P)).rejects.toMatchObject({ code });
    expect(faults.failed).toBe(1);
    expect(await t.rt.repos.schedules.get(KEY)).toEqual(before);
    expect(await invalidItems(t)).toEqual([]);

    // The store back: the same refresh finds the document valid and keeps its state.
    const again = await refreshProject(rt, T, P);
    expect([again.registered, again.failures]).toEqual([['job'], []]);
    expect(await t.rt.repos.schedules.get(KEY)).toEqual(before);
  });

  it("the tick's check: the tick fails with the store error and claims nothing; the next tick fires the occurrence", async () => {
    const t = await setup(dialect, { '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') });
    const before = await t.rt.repos.schedules.get(KEY);
    const { rt, faults, lines } = await faultyPeer(t);
    // A worker that has checked nothing yet: the tick checks the due scheduler (recipe, runAs).
    const worker = t.worker({ acquireAheadMs: 0 }, rt);
    // Twice: the check, and the refresh a scheduler taken for broken would get.
    faults.failNext('users', () => storeFailure(dialect), { count: 2 });
    t.clock.set(at('08:00:10'));
    await expect(worker.tick()).rejects.toMatchObject({ code });
    faults.disarm();
    expect(await t.rt.repos.schedules.get(KEY)).toEqual(before);
    expect(await runsOf(t.rt)).toEqual([]);
    expect(await invalidItems(t)).toEqual([]);
    expect(lines.filter((l) => l.msg === 'due scheduler has no valid document; refreshing')).toEqual([]);

    expect(await worker.tick()).toMatchObject({ due: 1, claimed: 1, fired: 1 });
    await worker.executor.settled();
    expect((await runsOf(t.rt)).map((r) => [iso(r.scheduledFor), r.outcome])).toEqual([
      ['2026-06-01T08:00:10Z', 'completed'],
    ]);
    expect(iso((await t.rt.repos.schedules.get(KEY))?.nextRunAt as number)).toBe('2026-06-01T08:00:20Z');
  });
});
