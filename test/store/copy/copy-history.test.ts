import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from '../../../src/runtime/worker.js';
import { copyStore } from '../../../src/store/copy/copy.js';
import { freshDatabase, type TestDatabase } from '../../support/dialects.js';
import { buildHistory, executions, ONE_SHOT_AT, P, runtimeAt, START, T, tickMinutes } from './history.js';

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

const OPTIONS = { now: START + 10 * 60_000, leaseMs: 7_000 };

describe('store copy of a week of history (issue #26)', () => {
  it('copies SQLite to PostgreSQL and back with equal counts and checksums, and the copy fires nothing twice', async () => {
    const source = await database('sqlite');
    const { marks } = await buildHistory(source);
    expect(executions(marks)).toHaveLength(1);

    const pgCopy = await database('postgres');
    const target = await database('sqlite');
    const toPg = await copyStore(source, pgCopy, OPTIONS);
    expect(toPg.verified).toBe(true);
    const back = await copyStore(pgCopy, target, OPTIONS);
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
    const { rt, store, clock } = await runtimeAt(target, START + 3 * 60_000);
    try {
      const before = await store.db
        .selectFrom('runs')
        .select(['name', 'scheduled_for'])
        .where('name', '=', 'minute')
        .execute();
      const worker = new Worker(rt, { acquireAheadMs: 0 });
      await worker.bootstrap();
      await tickMinutes(clock, worker, START + 3 * 60_000, 3);
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
      expect(minute.filter((at) => at > START + 3 * 60_000).sort()).toEqual(
        [4, 5, 6].map((m) => START + m * 60_000),
      );
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
