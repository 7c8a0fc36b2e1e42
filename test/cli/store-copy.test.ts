import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { runRow, START } from '../store/copy/history.js';
import { ursa } from '../support/cli.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';

// Issue #26 item 1: `ursa store copy` prints what it copied and verified, as a table or JSON, and
// refuses what it must.

const made: TestDatabase[] = [];
afterEach(async () => {
  for (const db of made.splice(0)) await db.drop();
});
async function database(dialect: 'sqlite' | 'postgres'): Promise<string> {
  const db = await freshDatabase(dialect);
  made.push(db);
  return db.location;
}

const NOW = new Date(START).toISOString();

/** A SQLite store with two runs and a worker whose heartbeat is at `heartbeat` (UTC ms). */
async function source(heartbeat: number): Promise<string> {
  const location = await database('sqlite');
  const store = await openStore(location);
  try {
    await store.db
      .insertInto('runs')
      .values([runRow('run_a', START - 120_000), runRow('run_b', START - 60_000)])
      .execute();
    await store.db
      .insertInto('workers')
      .values({
        id: 'wrk_a',
        host: 'h',
        pid: 1,
        started_at: heartbeat,
        heartbeat_at: heartbeat,
        stopped_at: null,
      })
      .execute();
  } finally {
    await store.close();
  }
  return location;
}

describe('ursa store copy (issue #26)', () => {
  it('prints a summary table of every table copied, with its rows, and the verdict', async () => {
    const from = await source(START - 3_600_000);
    const result = await ursa(['store', 'copy', '--from', from, '--to', await database('postgres')], {
      now: NOW,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^runs +2 {2}[0-9a-f]{16} {2}ok$/m);
    expect(result.stdout).toMatch(/^workers +1 {2}[0-9a-f]{16} {2}ok$/m);
    expect(result.stdout).not.toMatch(/store_identity|store_owner|kysely/);
    expect(result.stdout).toContain('verified: every table has the same rows and checksum as the source');
  });

  it('prints the summary as JSON, the checksums in full', async () => {
    const from = await source(START - 3_600_000);
    const result = await ursa(
      ['store', 'copy', '--from', from, '--to', await database('postgres'), '--json'],
      {
        now: NOW,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      to: string;
      verified: boolean;
      tables: {
        table: string;
        sourceRows: number;
        targetRows: number;
        sourceChecksum: string;
        equal: boolean;
      }[];
    };
    expect(summary.verified).toBe(true);
    expect(summary.to).toMatch(/^postgres:/);
    const runs = summary.tables.find((t) => t.table === 'runs');
    expect(runs).toMatchObject({ sourceRows: 2, targetRows: 2, equal: true });
    expect(runs?.sourceChecksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a source with a live worker without --live, and a target that is the source', async () => {
    const from = await source(START - 1_000);
    const to = await database('sqlite');
    const refused = await ursa(['store', 'copy', '--from', from, '--to', to], { now: NOW });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has 1 live worker; stop them first, or pass --live');
    expect(refused.stderr).toContain('[STORE_IN_USE]');
    expect((await ursa(['store', 'copy', '--from', from, '--to', to, '--live'], { now: NOW })).code).toBe(0);
    const same = await ursa(['store', 'copy', '--from', from, '--to', from, '--live'], { now: NOW });
    expect(same.stderr).toContain('[ARGUMENT_INVALID]');
  });
});
