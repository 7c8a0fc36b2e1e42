import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectSchedulers } from '../../src/catalog/catalog.js';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import type { PendingRun } from '../../src/runs/run.js';
import type { Runtime } from '../../src/runtime/context.js';
import { SimulatedCrash } from '../../src/runtime/faults.js';
import { applyDirectory } from '../../src/service/apply.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { capturedLog } from '../support/faults.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
// Another worker is dead once its heartbeat is older than the lease and the takeover margin (issue #20).
const DEAD_AFTER = TTL + TAKEOVER_MARGIN_MS;
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

class Crash extends SimulatedCrash {}

async function setup(dialect: (typeof DIALECTS)[number], script: string, cron = '*/10 * * * * *') {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/job.yaml': shellRecipe(script),
      '_vance/scheduler/job.yaml': cronScheduler(cron, 'job'),
    }),
    T,
    P,
    libraryActor('alice'),
  );
  return t;
}

async function feedKinds(rt: Runtime) {
  return (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100))
    .map((l) => `${l.kind} ${l.outcome}`)
    .reverse();
}

// decisions §4, §5: several workers, leases, and nothing lost or doubled when one dies.
describe.each(DIALECTS)('workers on %s (decisions §5)', (dialect) => {
  it('starts a run exactly once when its worker dies between claim and spawn (injected fault point)', async () => {
    const t = await setup(dialect, 'echo ran');
    const a = t.worker({
      leaseTtlMs: TTL,
      faults: { afterClaim: () => Promise.reject(new Crash('killed after claim')) },
    });
    const rtB = await t.peer();
    const b = t.worker({ leaseTtlMs: TTL }, rtB);
    await a.bootstrap();
    await b.bootstrap();

    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await a.heartbeat(); // its lease timer renews it every second
    await expect(a.tick()).rejects.toBeInstanceOf(Crash);
    const [claimed] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 10);
    expect(claimed).toMatchObject({ state: 'claimed', workerId: a.id });

    // While A's lease holds, B leaves its claim alone.
    expect(await b.reap()).toEqual({ lost: 0, resumed: 0 });
    t.clock.advance(DEAD_AFTER + 1);
    expect(await b.reap()).toEqual({ lost: 0, resumed: 1 });
    await b.executor.settled();
    expect(await b.reap()).toEqual({ lost: 0, resumed: 0 });

    // The dead worker coming back cannot start it a second time: the run is no longer its.
    a.executor.start(claimed as PendingRun, await effective(rtB));
    await a.executor.settled();

    const runs = await t.rt.repos.runs.listForScheduler(T, P, 'job', 10);
    expect(runs.map((r) => [r.correlationId, r.outcome, r.workerId])).toEqual([
      [claimed?.correlationId, 'completed', b.id],
    ]);
    expect(await t.store.db.selectFrom('processes').select('id').execute()).toHaveLength(1);
    expect(await feedKinds(t.rt)).toEqual(['START pending', 'END completed']);
  });

  it('ends the running process of a dead worker failed with reason worker-lost, once', async () => {
    const t = await setup(dialect, 'sleep 30');
    // A stands for a dead worker: B's reap ends its process group (issue #20), and A, alive in
    // this test, records nothing of it until the test lets it.
    let release = () => {};
    const ownEnd = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = t.worker({ leaseTtlMs: TTL, faults: { beforeEnd: () => ownEnd } });
    const rtB = await t.peer();
    const b = t.worker({ leaseTtlMs: TTL }, rtB);
    await a.bootstrap();
    await b.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await a.heartbeat();
    expect(await a.tick()).toMatchObject({ claimed: 1, fired: 1 });
    // Wait (by polling the store, not a sleep) until A's process is running.
    await until(async () => {
      const [started] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
      const process = started?.processId ? await t.rt.repos.processes.get(started.processId) : undefined;
      return process?.status === 'running';
    });

    t.clock.advance(DEAD_AFTER + 1);
    expect(await b.reap()).toEqual({ lost: 1, resumed: 0 });
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
    expect(run).toMatchObject({ state: 'ended', outcome: 'failed', reason: 'worker-lost' });
    expect(await t.rt.repos.processes.get(run?.processId as string)).toMatchObject({
      status: 'failed',
      reason: 'worker-lost',
    });
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath as string });
    expect(log?.body).toContain('outcome: failed');
    expect(log?.body).toContain('reason: worker-lost');

    // A's engine returns; A may not write a second END line over B's.
    release();
    await a.executor.drain(0);
    expect(await feedKinds(t.rt)).toEqual(['START pending', 'END failed']);
    expect(await t.rt.repos.processes.withStatus(['ready', 'running'])).toEqual([]);
  });

  // issue #20 (decisions §5 fencing): a silent worker ends its own processes before its lease
  // expires; the others wait out the lease and the margin before they take its runs over.
  it('takes a silent worker’s runs over only once its heartbeat is older than the lease plus the takeover margin (issue #20)', async () => {
    const t = await setup(dialect, 'sleep 30');
    // A's own end of its run (its group is ended by B's reap) waits until B has reaped.
    let release = () => {};
    const ownEnd = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = t.worker({ leaseTtlMs: TTL, faults: { beforeEnd: () => ownEnd } });
    const rtB = await t.peer();
    const b = t.worker({ leaseTtlMs: TTL }, rtB);
    await a.bootstrap();
    await b.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await a.heartbeat();
    expect(await a.tick()).toMatchObject({ claimed: 1, fired: 1 });
    await until(async () => {
      const [started] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
      const process = started?.processId ? await t.rt.repos.processes.get(started.processId) : undefined;
      return process?.status === 'running';
    });
    const retired = async () =>
      (await t.store.db.selectFrom('workers').select('stopped_at').where('id', '=', a.id).executeTakeFirst())
        ?.stopped_at ?? null;

    // Past the lease but within the margin: nothing is taken, A is not retired, its run stays its own.
    t.clock.advance(TTL + 1);
    expect(await b.reap()).toEqual({ lost: 0, resumed: 0 });
    expect(await retired()).toBe(null);
    const [held] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
    expect([held?.state, held?.workerId]).toEqual(['started', a.id]);
    expect(await t.rt.repos.processes.get(held?.processId as string)).toMatchObject({ status: 'running' });

    // Past the lease and the margin: A is dead, its run ends worker-lost and A is retired.
    t.clock.advance(TAKEOVER_MARGIN_MS);
    expect(await b.reap()).toEqual({ lost: 1, resumed: 0 });
    expect(await retired()).not.toBe(null);
    release();
    await a.executor.drain(0);
  });

  it('claims a schedule a week in arrears once when three workers tick at the same instant (decisions §4)', async () => {
    const t = await setup(dialect, 'true');
    // PostgreSQL: three connections, as three worker processes. SQLite allows one process (decisions §5),
    // so its three workers share the connection and race between their statements.
    const runtimes = dialect === 'postgres' ? [t.rt, await t.peer(), await t.peer()] : [t.rt, t.rt, t.rt];
    const workers = runtimes.map((rt) => t.worker({}, rt));
    for (const w of workers) await w.bootstrap();
    t.clock.set(Date.parse('2026-06-08T08:00:05Z'));
    const results = await Promise.all(workers.map((w) => w.tick()));
    await Promise.all(workers.map((w) => w.executor.settled()));
    expect(results.reduce((n, r) => n + r.claimed, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.coalesced, 0)).toBe(1);
    const runs = await t.rt.repos.runs.listForScheduler(T, P, 'job', 10);
    expect(runs.map((r) => [iso(r.scheduledFor), r.coalesced, iso(r.coalescedUntil as number)])).toEqual([
      ['2026-06-01T08:00:10Z', true, '2026-06-08T08:00:00Z'],
    ]);
    expect((await feedKinds(t.rt)).filter((k) => k.startsWith('START'))).toHaveLength(1);
    const state = await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'job' });
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-08T08:00:10Z');
  });
});

// issue #11 (four saturated workers logged "finished the work of lost workers" with none lost): a
// reap read a run of its own as claimed, the run was started and ended here before the read
// returned, and the reap took it for one no dispatch carried.
describe.each(DIALECTS)('a reap on %s (decisions §5, issue #11)', (dialect) => {
  it('does not resume a run of its own that was dispatched when its read began and ended since', async () => {
    const t = await setup(dialect, 'echo ran');
    let spawn: () => void = () => {};
    const spawnable = new Promise<void>((resolve) => {
      spawn = resolve;
    });
    const worker = t.worker({ leaseTtlMs: TTL, faults: { beforeSpawn: () => spawnable } });
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    // The reap's read sees the run claimed; the run then starts and ends before the read returns.
    const runs = t.rt.repos.runs;
    const heldBy = runs.heldBy.bind(runs);
    runs.heldBy = async (...args) => {
      const rows = await heldBy(...args);
      expect(rows.map((r) => r.state)).toEqual(['claimed']);
      spawn();
      await worker.executor.settled();
      return rows;
    };

    expect(await worker.reap()).toEqual({ lost: 0, resumed: 0 });
    await worker.executor.settled();
    const [run] = await runs.listForScheduler(T, P, 'job', 5);
    expect([run?.state, run?.outcome]).toEqual(['ended', 'completed']);
    expect(await feedKinds(t.rt)).toEqual(['START pending', 'END completed']);
  });

  // A newcomer's `ursa fire` logged a warning that a worker was lost (helper review, issue #11).
  it('dispatches a manual fire without logging the work of lost workers', async () => {
    const t = await setup(dialect, 'echo ran');
    const { log, lines } = capturedLog('info');
    const worker = t.worker({ leaseTtlMs: TTL }, { ...t.rt, log });
    await worker.bootstrap();
    await fireScheduler(t.rt, T, P, 'job');

    expect(await worker.reap()).toEqual({ lost: 0, resumed: 1 });
    await worker.executor.settled();
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);
    expect(lines.filter((l) => l.msg === 'manual fires dispatched').map((l) => l.manualFires)).toEqual([1]);
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 5);
    expect([run?.trigger, run?.outcome]).toEqual(['manual', 'completed']);
  });
});

async function effective(rt: Runtime) {
  const { schedulers } = await loadProjectSchedulers(rt.repos, T, P);
  return schedulers.get('job') as NonNullable<ReturnType<typeof schedulers.get>>;
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition never held');
}

// spec §10a, issue #6: a spawn that fails is retried with backoff, and gives up visibly.
describe('a failing spawn (spec §10a)', () => {
  it('is retried until it succeeds, and the run happens once', async () => {
    const t = await setup('sqlite', 'echo ok');
    let failures = 2;
    const worker = t.worker({
      spawnRetryBaseMs: 1,
      faults: {
        beforeSpawn: () => {
          if (failures-- > 0) throw new Error('the store blinked');
        },
      },
    });
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    const runs = await t.rt.repos.runs.listForScheduler(T, P, 'job', 5);
    expect(runs.map((r) => r.outcome)).toEqual(['completed']);
    expect(failures).toBe(-1);
  });

  it('ends the run failed with the reason when every retry failed, freeing its lane', async () => {
    const t = await setup('sqlite', 'echo ok');
    const worker = t.worker({
      spawnRetryBaseMs: 1,
      faults: { beforeSpawn: () => Promise.reject(new Error('no way')) },
    });
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 5);
    expect(run).toMatchObject({ state: 'ended', outcome: 'failed', reason: 'spawn-failed' });
    expect(await feedKinds(t.rt)).toEqual(['END failed']);
  });
});
