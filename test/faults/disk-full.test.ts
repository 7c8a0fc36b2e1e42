import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { isUrsaError, UrsaError } from '../../src/errors/index.js';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { iso } from '../support/cases.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { capturedLog, coverage, expectStartedAndEndedOnce, runtimeOn } from '../support/faults.js';
import { cronScheduler, projectFolder } from '../support/project.js';

const T = 'acme';
const P = 'ops';
const START = Date.parse('2026-06-01T08:00:00Z');

let database: TestDatabase | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  await database?.drop();
  store = database = undefined;
});

/**
 * Makes the SQLite file unable to grow, as a full disk does: SQLite answers SQLITE_FULL to any
 * write that needs a page more (`max_page_count` of the store's one connection, at its current
 * size). Returns the function that gives the space back.
 */
async function fillDisk(s: Store): Promise<() => Promise<void>> {
  const row = await sql<{ page_count: number }>`pragma page_count`.execute(s.db);
  const pages = Number(row.rows[0]?.page_count);
  await sql.raw(`pragma max_page_count = ${pages}`).execute(s.db);
  return async () => {
    await sql.raw('pragma max_page_count = 4294967294').execute(s.db);
  };
}

// issue #12: a full disk fails a write with a typed error; the store stays whole, and Ursa goes on when space returns.
describe('disk full on the SQLite file (issue #12)', () => {
  it('refuses a write with STORE_FULL and keeps the store as it was', async () => {
    database = await freshDatabase('sqlite');
    store = await openStore(database.location);
    const rt = runtimeOn(store, fixedClock(START));
    const restore = await fillDisk(store);
    const big = 'x'.repeat(64 * 1024 - 100);
    const error = await rt.repos.documents
      .put({ tenant: T, project: P, path: 'notes/big.md' }, big, libraryActor('alice'), START)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // The original fault, typed — not "cannot rollback - no transaction is active" from the rollback after it.
    expect(error).toBeInstanceOf(UrsaError);
    expect(error).toMatchObject({ code: 'STORE_FULL', field: 'db', status: 507 });
    expect((error as Error).message).toBe(
      `store: the disk of the SQLite store is full (SQLITE_FULL); the write was rolled back whole — free space and Ursa goes on where it stopped`,
    );
    expect(await rt.repos.documents.get({ tenant: T, project: P, path: 'notes/big.md' })).toBeUndefined();
    await restore();
    await rt.repos.documents.put(
      { tenant: T, project: P, path: 'notes/big.md' },
      big,
      libraryActor('alice'),
      START,
    );
    const stored = await rt.repos.documents.get({ tenant: T, project: P, path: 'notes/big.md' });
    expect(stored?.body).toBe(big);
    expect(stored?.version).toBe(1);
    expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(store.db)).rows).toEqual([
      { integrity_check: 'ok' },
    ]);
  });

  it('a worker on a full disk fails its passes with STORE_FULL, writes no half run, and catches up once when space returns', async () => {
    database = await freshDatabase('sqlite');
    store = await openStore(database.location);
    const clock = fixedClock(START);
    const { log, lines } = capturedLog('warn');
    const rt = runtimeOn(store, clock, log);
    const names = ['a', 'b', 'c'];
    const files: Record<string, string> = {};
    for (const name of names) files[`_vance/scheduler/${name}.yaml`] = cronScheduler('* * * * * *', 'noop');
    await applyDirectory(rt, projectFolder(files), T, P, libraryActor('alice'));
    // A record the full disk refused is retried only briefly here, and so is a start it refused
    // (a start and its START lines are one write): this test is about what the recovery finds
    // when the worker gave up on it (a longer retry is tested in store-write-retry).
    const worker = new Worker(rt, {
      acquireAheadMs: 0,
      exclusive: true,
      recordRetry: { attempts: 2, baseMs: 1, maxMs: 1 },
      spawnRetryBaseMs: 1,
    });
    await worker.bootstrap();

    // Every second fires while there is space.
    for (let s = 1; s <= 3; s++) {
      clock.set(START + s * 1000);
      expect(await worker.tick()).toMatchObject({ claimed: 3, fired: 3 });
      await worker.executor.settled();
    }
    const restore = await fillDisk(store);
    // The disk is full: passes go on, one a second, until one fails (a claim, or the writes of a
    // start or an end in the background, which log it).
    let failure: unknown;
    let fullAt = 0;
    for (let s = 4; s <= 200 && failure === undefined; s++) {
      clock.set(START + s * 1000);
      try {
        await worker.tick();
        await worker.executor.settled();
        failure = lines.find((l) => l.err?.message?.includes('the disk of the SQLite store is full'))?.err;
      } catch (error) {
        failure = error;
      }
      fullAt = s;
    }
    expect(failure, 'a write failed on the full disk').toBeDefined();
    expect((failure as { message: string }).message).toMatch(
      /the disk of the SQLite store is full \(SQLITE_FULL\)/,
    );
    if (failure instanceof Error) expect(isUrsaError(failure, 'STORE_FULL')).toBe(true);
    // Ten more seconds on the full disk: every claim fails whole.
    for (let s = fullAt + 1; s <= fullAt + 10; s++) {
      clock.set(START + s * 1000);
      await worker.tick().catch((error: unknown) => {
        expect(isUrsaError(error, 'STORE_FULL')).toBe(true);
      });
      await worker.executor.settled();
    }

    // Space returns: the worker recovers its own runs a failed write left (reap), then catches up.
    await restore();
    const end = fullAt + 12;
    clock.set(START + end * 1000);
    await worker.reap(true);
    await worker.executor.settled();
    await worker.tick();
    await worker.executor.settled();

    const db = store.db;
    expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db)).rows).toEqual([
      { integrity_check: 'ok' },
    ]);
    const runs = await db.selectFrom('runs').selectAll().orderBy('scheduled_for').execute();
    // Each occurrence from 08:00:01 on is a run or absorbed by a coalesced one, never two runs.
    expect(coverage(runs, names, START + 1000, START + end * 1000, 1000)).toEqual({
      missing: [],
      doubled: [],
    });
    // No half run: each ended, with one END line and its final run log; no process is left
    // active. A run whose start records the full disk refused (its process row, START line and
    // pending log are written after its engine is entered) and whose end then failed too, was
    // ended worker-lost by the recovery: the feed carries its trace (spec §9a).
    expect(runs.filter((r) => r.state !== 'ended')).toEqual([]);
    await expectStartedAndEndedOnce(store, runs);
    const active = await db
      .selectFrom('processes')
      .select('id')
      .where('status', 'in', ['ready', 'running'])
      .execute();
    expect(active).toEqual([]);
    const logs = await db
      .selectFrom('documents')
      .select(['path', 'body'])
      .where('path', 'like', '_vance/logs/%')
      .execute();
    for (const run of runs) {
      const body = logs.find((l) => l.path === run.log_path)?.body ?? '';
      expect(/outcome: (\w+)/.exec(body)?.[1], run.correlation_id).toBe(run.outcome);
    }
    // The catch-up after the outage: one run per scheduler for the whole full-disk span, coalesced.
    const last = names.map((name) => runs.filter((r) => r.name === name).at(-1));
    for (const run of last) {
      expect(run).toMatchObject({ outcome: 'completed', coalesced: 1 });
      expect(iso(Number(run?.coalesced_until))).toBe(iso(START + end * 1000));
    }
    expect(lines.some((l) => l.msg === 'run ended failed' || l.err !== undefined)).toBe(true);
  });
});
