import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from '../../../src/runtime/worker.js';
import { copyStore } from '../../../src/store/copy/copy.js';
import { freshDatabase, type TestDatabase } from '../../support/dialects.js';
import {
  buildHistory,
  executions,
  LANE_IN_FLIGHT,
  LANE_QUEUED,
  laneRuns,
  ONE_SHOT_AT,
  P,
  runtimeAt,
  START,
  T,
  tickMinutes,
} from './history.js';

// Issue #26 item 1: a store with a week of history moves SQLite → PostgreSQL → SQLite with equal
// counts and checksums, and workers on the copy fire nothing twice and miss nothing.

const made: TestDatabase[] = [];
afterEach(async () => {
  for (const db of made.splice(0)) await db.drop();
});
async function database(dialect: 'sqlite' | 'postgres') {
  const db = await freshDatabase(dialect);
  made.push(db);
  return db.location;
}

const LEASE_MS = 7_000;
const COPIED_AT = START + 5 * 60_000;

describe('store copy of a week of history (issue #26)', () => {
  it('copies SQLite to PostgreSQL and back with equal counts and checksums, and the copy fires nothing twice', async () => {
    const source = await database('sqlite');
    const pgCopy = await database('postgres');
    const target = await database('sqlite');
    // A live copy: the source's worker runs a lane run and holds another queued.
    const live = await buildHistory(source);
    const { marks } = live;
    let toPg: Awaited<ReturnType<typeof copyStore>>;
    try {
      expect(executions(marks)).toHaveLength(1);
      const options = { now: COPIED_AT, leaseMs: LEASE_MS };
      await expect(copyStore(source, pgCopy, options)).rejects.toMatchObject({ code: 'STORE_IN_USE' });
      toPg = await copyStore(source, pgCopy, { ...options, live: true });
    } finally {
      await live.finish();
    }
    expect(toPg.verified).toBe(true);
    // The PostgreSQL copy has no live worker: the source's stopped renewing there at the copy.
    const back = await copyStore(pgCopy, target, { now: COPIED_AT + 60_000, leaseMs: LEASE_MS });
    expect(back.verified).toBe(true);
    const sums = (r: typeof toPg) => r.tables.map((t) => [t.table, t.sourceRows, t.sourceChecksum]);
    expect(sums(back)).toEqual(sums(toPg));
    const runs = toPg.tables.find((t) => t.table === 'runs');
    expect(runs?.sourceRows).toBeGreaterThan(10_000);
    for (const table of [
      'documents',
      'document_archive',
      'feed',
      'inbox',
      'oneshot_fires',
      'tokens',
      'settings',
      'sessions',
      'processes',
      'audit_log',
    ])
      expect(toPg.tables.find((t) => t.table === table)?.sourceRows, table).toBeGreaterThan(0);

    // Workers on the final copy, with the clock stepped on from where the source stopped.
    const { rt, store, clock } = await runtimeAt(target, COPIED_AT);
    try {
      const before = await store.db
        .selectFrom('runs')
        .select(['name', 'scheduled_for'])
        .where('name', '=', 'minute')
        .execute();
      const worker = new Worker(rt, { acquireAheadMs: 0 });
      await worker.bootstrap();
      await tickMinutes(clock, worker, COPIED_AT, 3);
      // The loop's reap, now that the source's worker is lost here: its lane run ends, the queued one runs.
      await worker.reap();
      await worker.executor.settled();
      await worker.stop();
      const after = await store.db
        .selectFrom('runs')
        .select(['name', 'scheduled_for', 'outcome'])
        .where('tenant', '=', T)
        .where('project', '=', P)
        .execute();
      const minute = after.filter((r) => r.name === 'minute').map((r) => Number(r.scheduled_for));
      // Every occurrence once, and the three new minutes exactly.
      expect(new Set(minute).size).toBe(minute.length);
      expect(minute.length).toBe(before.length + 3);
      expect(minute.filter((at) => at > COPIED_AT).sort()).toEqual([6, 7, 8].map((m) => START + m * 60_000));
      // The run in flight at the copy ended as a lost worker's; the queued one ran here, once.
      expect((await laneRuns(store)).slice(0, 2)).toEqual([
        [LANE_IN_FLIGHT, 'ended', 'failed', 'worker-lost'],
        [LANE_QUEUED, 'ended', 'completed', null],
      ]);
      // The one-shot ran once, on the source, and never again.
      expect(after.filter((r) => r.name === 'once').map((r) => [Number(r.scheduled_for), r.outcome])).toEqual(
        [[ONE_SHOT_AT, 'completed']],
      );
      expect(executions(marks)).toHaveLength(1);
    } finally {
      await store.close();
    }
  }, 120_000);
});
