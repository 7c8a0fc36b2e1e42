import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isUrsaError } from '../../src/errors/index.js';
import type { Runtime } from '../../src/runtime/context.js';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { iso } from '../support/cases.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { runtimeOn } from '../support/faults.js';
import { cronScheduler, projectFolder } from '../support/project.js';

const T = 'acme';
const P = 'ops';
const KEY = { tenant: T, project: P, name: 'job' };

let database: TestDatabase | undefined;
let store: Store | undefined;
let blocker: SQLite.Database | undefined;
afterEach(async () => {
  blocker?.close();
  await store?.close();
  await database?.drop();
  blocker = store = database = undefined;
});

/** A worker on a fresh SQLite file, a `*\/10` noop scheduler, and another connection to the file. */
async function setup(busyTimeoutMs?: number) {
  database = await freshDatabase('sqlite');
  store = await openStore(database.location, busyTimeoutMs === undefined ? {} : { busyTimeoutMs });
  const clock = fixedClock(Date.parse('2026-06-01T08:00:00Z'));
  const rt = runtimeOn(store, clock);
  await applyDirectory(
    rt,
    projectFolder({ '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'noop') }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = new Worker(rt, { acquireAheadMs: 0 });
  await worker.bootstrap();
  // Another connection to the same file, as a backup or the sqlite3 shell would open it.
  blocker = new SQLite(database.location);
  return { rt, clock, worker, blocker };
}

/** Every trace of the scheduler's runs: rows, processes, feed lines, run logs. */
async function traces(rt: Runtime) {
  const db = rt.repos.store.db;
  const runs = await db.selectFrom('runs').selectAll().orderBy('scheduled_for').execute();
  const processes = await db.selectFrom('processes').select(['id', 'status']).execute();
  const lines = (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100))
    .reverse()
    .map((l) => `${l.kind} ${l.outcome} ${l.traceId}`);
  const logs = await db
    .selectFrom('documents')
    .select(['path', 'body'])
    .where('path', 'like', '_vance/logs/%')
    .execute();
  return { runs, processes, lines, logs };
}

/** Resolves after `turns` turns of the event loop's timer phase (lets a busy statement retry a few times). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

// issue #12: another connection holding SQLite's write lock delays Ursa's writes; it never splits them.
describe('SQLite busy or locked (issue #12, decisions §5)', () => {
  it('waits out a write lock held across a claim and claims the occurrence once, whole', async () => {
    const { rt, clock, worker, blocker } = await setup();
    blocker.exec('begin immediate');
    clock.set(Date.parse('2026-06-01T08:00:10Z'));
    let result: Awaited<ReturnType<Worker['tick']>> | undefined;
    const ticking = worker.tick().then((r) => {
      result = r;
    });
    await turns(10);
    // The claim waits for the lock (asynchronously: these turns ran); nothing of it is visible yet.
    expect(result).toBeUndefined();
    expect(blocker.prepare('select count(*) as n from runs').get()).toEqual({ n: 0 });
    blocker.exec('commit');
    await ticking;
    expect(result).toEqual({ due: 1, claimed: 1, coalesced: 0, fired: 1, skipped: 0 });
    await worker.executor.settled();

    const { runs, processes, lines, logs } = await traces(rt);
    expect(runs.map((r) => [iso(Number(r.scheduled_for)), r.state, r.outcome])).toEqual([
      ['2026-06-01T08:00:10Z', 'ended', 'completed'],
    ]);
    const id = runs[0]?.correlation_id;
    expect(processes).toEqual([{ id: runs[0]?.process_id, status: 'done' }]);
    expect(lines).toEqual([`START pending ${id}`, `END completed ${id}`]);
    expect(logs).toHaveLength(1);
    expect(logs[0]?.body).toContain('outcome: completed');
    const state = await rt.repos.schedules.get(KEY);
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T08:00:20Z');
  });

  it('waits out a write lock taken while the run ends, and records it completed, not lost', async () => {
    const { rt, clock, blocker } = await setup();
    // The lock is taken when the engine has returned, before the end is written (the fault point),
    // and let go 300 ms later: the end write waits for it, then lands whole.
    let released: Promise<void> | undefined;
    const worker = new Worker(rt, {
      acquireAheadMs: 0,
      faults: {
        beforeEnd: () => {
          blocker.exec('begin immediate');
          released = new Promise((resolve) =>
            setTimeout(() => {
              blocker.exec('commit');
              resolve();
            }, 300),
          );
        },
      },
    });
    await worker.bootstrap();
    clock.set(Date.parse('2026-06-01T08:00:10Z'));
    expect(await worker.tick()).toMatchObject({ claimed: 1, fired: 1 });
    await worker.executor.settled();
    await released;
    expect(released).toBeDefined();
    const { runs, processes, lines, logs } = await traces(rt);
    const id = runs[0]?.correlation_id;
    expect(runs.map((r) => [r.state, r.outcome, r.reason])).toEqual([['ended', 'completed', null]]);
    expect(processes).toEqual([{ id: runs[0]?.process_id, status: 'done' }]);
    expect(lines).toEqual([`START pending ${id}`, `END completed ${id}`]);
    expect(logs.map((l) => /outcome: (\w+)/.exec(l.body)?.[1])).toEqual(['completed']);
  });

  it('fails a claim blocked past its busy timeout with STORE_BUSY, writing nothing; the next pass claims it once', async () => {
    const { rt, clock, worker, blocker } = await setup(200);
    blocker.exec('begin immediate');
    clock.set(Date.parse('2026-06-01T08:00:10Z'));
    const error = await worker.tick().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isUrsaError(error, 'STORE_BUSY')).toBe(true);
    expect((error as Error).message).toMatch(/another connection held the write lock for more than 200 ms/);
    blocker.exec('rollback');

    // Nothing of the failed claim was written: no run, and the state still waits for 08:00:10.
    let state = await rt.repos.schedules.get(KEY);
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T08:00:10Z');
    expect(state?.lastScheduledAt).toBeNull();
    expect((await traces(rt)).runs).toEqual([]);

    // The lock is gone; 30 s later the next pass claims the backlog once, coalesced (decisions §4).
    clock.set(Date.parse('2026-06-01T08:00:40Z'));
    expect(await worker.tick()).toEqual({ due: 1, claimed: 1, coalesced: 1, fired: 1, skipped: 0 });
    await worker.executor.settled();
    const { runs, lines } = await traces(rt);
    expect(
      runs.map((r) => [iso(Number(r.scheduled_for)), r.outcome, iso(Number(r.coalesced_until))]),
    ).toEqual([['2026-06-01T08:00:10Z', 'completed', '2026-06-01T08:00:40Z']]);
    expect(lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['START pending', 'END completed']);
    state = await rt.repos.schedules.get(KEY);
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T08:00:50Z');
  });
});
