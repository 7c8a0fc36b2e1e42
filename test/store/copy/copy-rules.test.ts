import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, linkSync } from 'node:fs';
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { endLeftoverGroups } from '../../../src/fencing/leftovers.js';
import { identifyGroup, readStat } from '../../../src/processes/process-group.js';
import { copyStore } from '../../../src/store/copy/copy.js';
import { openSnapshot } from '../../../src/store/copy/snapshot.js';
import { COPIED_TABLES, isKnownTable, TABLE_ROLES } from '../../../src/store/copy/tables.js';
import { takeFencingTokens } from '../../../src/store/fencing.js';
import { openStore } from '../../../src/store/index.js';
import { migrationsFor } from '../../../src/store/migrations/index.js';
import type { StoreDialect } from '../../../src/store/open.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../../support/dialects.js';
import { runRow, runtimeAt, START } from './history.js';

// Issue #26 item 1: what a store copy refuses, what it keeps of the target, and that a worker on
// the copy never ends the process groups of the source's workers.

const made: TestDatabase[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  for (const db of made.splice(0)) await db.drop();
});
async function database(dialect: StoreDialect): Promise<string> {
  const db = await freshDatabase(dialect);
  made.push(db);
  return db.location;
}
/** A migrated, empty store of `dialect`. */
async function emptyStore(dialect: StoreDialect): Promise<string> {
  const location = await database(dialect);
  await (await openStore(location)).close();
  return location;
}

const OPTIONS = { now: START, leaseMs: 7_000 };
const PAIRS: [StoreDialect, StoreDialect][] = [
  ['sqlite', 'postgres'],
  ['postgres', 'sqlite'],
];

async function identity(location: string): Promise<string> {
  const store = await openStore(location);
  try {
    const row = await store.db.selectFrom('store_identity').select('store_id').executeTakeFirstOrThrow();
    return row.store_id;
  } finally {
    await store.close();
  }
}

describe.each(DIALECTS)('the tables a copy knows, on %s (issue #26)', (dialect) => {
  it('knows every table a migrated store holds, and copies every table of the schema but its own identity and server', async () => {
    const snapshot = await openSnapshot(await emptyStore(dialect));
    try {
      const tables = await snapshot.tables();
      expect(tables.filter((table) => !isKnownTable(table))).toEqual([]);
      // Every schema table exists in the store, and each has a primary key to page by.
      for (const table of Object.keys(TABLE_ROLES)) {
        expect(tables, table).toContain(table);
        expect((await snapshot.primaryKey(table)).length, table).toBeGreaterThan(0);
      }
    } finally {
      await snapshot.close();
    }
    expect(
      Object.keys(TABLE_ROLES)
        .filter((t) => !COPIED_TABLES.includes(t as never))
        .sort(),
    ).toEqual(['store_identity', 'store_owner']);
  });
});

describe.each(DIALECTS)('a source at another schema version, on %s (issue #26)', (dialect) => {
  it('is refused and left at its version: the copy never migrates its source', async () => {
    const source = await emptyStore(dialect);
    const store = await openStore(source);
    try {
      const migrator = new Migrator({ db: store.db, provider: migrationsFor(store.dialect) });
      expect((await migrator.migrateTo('0020-feed-project-index')).error).toBeUndefined();
    } finally {
      await store.close();
    }
    await expect(copyStore(source, await database(dialect), OPTIONS)).rejects.toMatchObject({
      code: 'STORE_SCHEMA_MISMATCH',
      message: expect.stringContaining('is at schema version 0020-feed-project-index'),
    });
    const snapshot = await openSnapshot(source);
    try {
      expect((await snapshot.migrations()).at(-1)).toBe('0020-feed-project-index');
    } finally {
      await snapshot.close();
    }
  });
});

describe('a SQLite source that cannot be read safely (issue #26)', () => {
  it('refuses a missing file without creating it, and a file with a second name (hard link)', async () => {
    const location = await database('sqlite');
    await expect(copyStore(location, await database('sqlite'), OPTIONS)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    expect(existsSync(location)).toBe(false);
    await (await openStore(location)).close();
    linkSync(location, `${location}.link`);
    await expect(copyStore(location, await database('sqlite'), OPTIONS)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('has 2 names (hard links)'),
    });
  });
});

describe.each(PAIRS)('store copy from %s to %s (issue #26)', (from, to) => {
  it('refuses a non-empty target without --force and changes nothing; --force replaces it, never merges', async () => {
    const source = await database(from);
    const target = await database(to);
    const s = await runtimeAt(source, START);
    await s.store.db.insertInto('runs').values(runRow('run_source', START)).execute();
    await s.store.close();
    const t = await runtimeAt(target, START);
    await t.store.db
      .insertInto('runs')
      .values(runRow('run_target', START - 60_000))
      .execute();
    await t.store.close();

    await expect(copyStore(source, target, OPTIONS)).rejects.toMatchObject({ code: 'STORE_NOT_EMPTY' });
    const runs = async () => {
      const store = await openStore(target);
      try {
        return (await store.db.selectFrom('runs').select('correlation_id').execute()).map(
          (r) => r.correlation_id,
        );
      } finally {
        await store.close();
      }
    };
    expect(await runs()).toEqual(['run_target']);
    const result = await copyStore(source, target, { ...OPTIONS, force: true });
    expect(result.verified).toBe(true);
    expect(await runs()).toEqual(['run_source']);
  });

  it('refuses a source with a live worker unless --live, never writes the source, and the target keeps its own identity', async () => {
    const source = await database(from);
    const s = await runtimeAt(source, START);
    await s.rt.repos.workers.register({ id: 'wrk_live', host: 'h', pid: 1, startedAt: START - 1000 });
    await s.store.close();
    const before = await copyStore(source, await emptyStore(to), { ...OPTIONS, live: true });
    const target = await emptyStore(to);
    await expect(copyStore(source, target, OPTIONS)).rejects.toMatchObject({ code: 'STORE_IN_USE' });
    // Refused before anything was written to the target.
    expect((await copyStore(source, target, { ...OPTIONS, live: true })).verified).toBe(true);
    // The source reads the same after three copies.
    const again = await copyStore(source, await emptyStore(to), { ...OPTIONS, live: true });
    expect(again.tables.map((t) => t.sourceChecksum)).toEqual(before.tables.map((t) => t.sourceChecksum));
    expect(await identity(target)).not.toBe(await identity(source));
  });

  it('numbers new rows and fencing tokens on the target after the copied ones', async () => {
    const source = await database(from);
    const s = await runtimeAt(source, START);
    const item = {
      tenant: 'acme',
      user: 'alice',
      kind: 'run-failed',
      title: 't',
      body: 'b',
      createdAt: START,
    } as const;
    for (let i = 0; i < 3; i++) await s.rt.repos.inbox.add(item);
    const key = { tenant: 'acme', project: 'ops', name: 'nightly' };
    let sourceToken = 0;
    for (let i = 0; i < 3; i++)
      [sourceToken = 0] = await s.store.db
        .transaction()
        .execute((trx) => takeFencingTokens(trx, from, [key]));
    expect(sourceToken).toBe(3);
    await s.store.close();
    const target = await database(to);
    expect((await copyStore(source, target, OPTIONS)).verified).toBe(true);

    const t = await runtimeAt(target, START);
    try {
      expect(await t.rt.repos.inbox.add(item)).toBe(4);
      const next = await t.store.db
        .transaction()
        .execute((trx) => takeFencingTokens(trx, to, [key, { ...key, name: 'other' }]));
      // Each scheduler counts its own: the copied one goes on, a new one starts at the first.
      expect(next).toEqual([sourceToken + 1, 1]);
    } finally {
      await t.store.close();
    }
  });

  it("a worker on the copy never ends a process group of the source's workers, which the source itself would end", async () => {
    const source = await database(from);
    const s = await runtimeAt(source, START);
    const child = spawn('sleep', ['300'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, URSA_PROCESS_ID: 'proc_in_flight' },
    });
    children.push(child);
    const pid = child.pid as number;
    await s.rt.repos.workers.register({ id: 'wrk_source', host: 'h', pid: 1, startedAt: START });
    await s.store.db
      .insertInto('runs')
      .values(
        runRow('run_in_flight', START, {
          state: 'started',
          outcome: 'pending',
          ended_at: null,
          process_id: 'proc_in_flight',
          worker_id: 'wrk_source',
        }),
      )
      .execute();
    await s.rt.repos.processGroups.record([
      { ...identifyGroup(pid), processId: 'proc_in_flight', workerId: 'wrk_source', recordedAt: START },
    ]);
    const target = await database(to);
    expect((await copyStore(source, target, { ...OPTIONS, live: true })).verified).toBe(true);

    // On the copy every other worker is dead, wrk_source too: still, nothing of the source ends.
    const t = await runtimeAt(target, START + 60_000);
    try {
      const lost = await t.rt.repos.runs.orphaned('started', { kind: 'only', workerId: 'wrk_target' }, 10);
      expect(lost.map((r) => r.correlationId)).toEqual(['run_in_flight']);
      const result = await endLeftoverGroups(t.rt, { kind: 'only', workerId: 'wrk_target' }, { runs: lost });
      expect(result).toEqual({ ended: 0, gone: 0, unverified: 0 });
      expect(readStat(pid)?.state).not.toBe('Z');
      const row = await t.store.db.selectFrom('process_groups').select('ended_at').executeTakeFirstOrThrow();
      expect(row.ended_at).toBeNull();
    } finally {
      await t.store.close();
    }
    // The source's own reap ends it: the test above would have seen it end.
    try {
      const lost = await s.rt.repos.runs.orphaned('started', { kind: 'only', workerId: 'wrk_other' }, 10);
      const ended = await endLeftoverGroups(
        s.rt,
        { kind: 'only', workerId: 'wrk_other' },
        { runs: lost },
        { graceMs: 100 },
      );
      expect(ended.ended).toBe(1);
    } finally {
      await s.store.close();
    }
  }, 30_000);
});
