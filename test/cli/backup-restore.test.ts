import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStat } from '../../src/processes/process-group.js';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import {
  executions,
  historyProject,
  ONE_SHOT_AT,
  P,
  runtimeAt,
  START,
  T,
  tickMinutes,
} from '../store/copy/history.js';
import { ursa } from '../support/cli.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

// Issue #26 item 2: `ursa backup` takes an online backup of a SQLite store while its worker runs a
// process, from the command's own connection; `ursa restore` puts it into an empty store of either
// dialect, where the run in flight is reaped like any run of a lost worker, the source's process
// is left alone, and nothing fires twice.

const made: TestDatabase[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  for (const db of made.splice(0)) await db.drop();
});
async function database(dialect: 'sqlite' | 'postgres'): Promise<string> {
  const db = await freshDatabase(dialect);
  made.push(db);
  return db.location;
}

const LONG_AT = START + 150_000;
const NOW = new Date(START + 10 * 60_000).toISOString();

describe('ursa backup and ursa restore (issue #26)', () => {
  it('backs up a SQLite store mid-run and restores it into empty stores that fire nothing twice', async () => {
    const source = await database('sqlite');
    const dir = tempDir('ursa-backup-');
    const longMarks = join(dir, 'long');
    const { rt, store, clock } = await runtimeAt(source, START);
    const marks = join(dir, 'once');
    await applyDirectory(rt, historyProject(marks), T, P, libraryActor('alice'));
    await applyDirectory(
      rt,
      projectFolder({
        '_vance/recipes/long.yaml': shellRecipe('echo "$$" >> "$URSA_PARAM_OUT"; exec sleep 300', {
          out: longMarks,
        }),
        '_vance/scheduler/long.yaml': `description: long\nat: "${new Date(LONG_AT).toISOString()}"\ntimezone: UTC\nrecipe: long\n`,
      }),
      T,
      P,
      libraryActor('alice'),
    );
    // The source's worker runs on until the end: its process must outlive the copy's reap.
    const worker = new Worker(rt, { acquireAheadMs: 0 });
    try {
      await worker.bootstrap();
      await tickMinutes(clock, worker, START, 2);
      expect(executions(marks)).toHaveLength(1);
      clock.set(LONG_AT);
      await worker.tick();
      await until(() => executions(longMarks).length === 1, 'the long run started');
      const pid = Number(executions(longMarks)[0]);
      pids.push(pid);

      const file = join(dir, 'ursa.backup');
      const backup = await ursa(['backup', file, '--db', source], { now: NOW });
      expect(backup).toMatchObject({ code: 0, stdout: `backed up to ${file}\n` });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(await ursa(['backup', file, '--db', source], { now: NOW })).toMatchObject({ code: 2 });
      await restoreAndRun(file, pid, marks, longMarks);
    } finally {
      await worker.stop();
      await store.close();
    }
  }, 120_000);

  async function restoreAndRun(file: string, pid: number, marks: string, longMarks: string): Promise<void> {
    for (const dialect of ['postgres', 'sqlite'] as const) {
      const target = await database(dialect);
      const restored = await ursa(['restore', file, '--db', target, '--json'], { now: NOW });
      expect(restored.code, restored.stderr).toBe(0);
      const summary = JSON.parse(restored.stdout) as {
        verified: boolean;
        tables: { table: string; targetRows: number }[];
      };
      expect(summary.verified).toBe(true);
      expect(summary.tables.find((t) => t.table === 'oneshot_fires')?.targetRows).toBe(2);
      // Not into a store that holds data, unless --force.
      const again = await ursa(['restore', file, '--db', target], { now: NOW });
      expect(again).toMatchObject({ code: 2 });
      expect(again.stderr).toContain('[STORE_NOT_EMPTY]');
      const forced = await ursa(['restore', file, '--db', target, '--force'], { now: NOW });
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stdout).toContain('verified: every table has the same rows and checksum as the source');

      const t = await runtimeAt(target, Date.parse(NOW));
      try {
        const onTarget = new Worker(t.rt, { acquireAheadMs: 0 });
        await onTarget.bootstrap();
        await tickMinutes(t.clock, onTarget, Date.parse(NOW), 2);
        await onTarget.stop();
        const runs = await t.store.db
          .selectFrom('runs')
          .select(['name', 'scheduled_for', 'outcome', 'reason'])
          .where('tenant', '=', T)
          .execute();
        const keys = runs.map((r) => `${r.name}@${r.scheduled_for}`);
        expect(new Set(keys).size).toBe(keys.length);
        // The run in flight at the backup ended as a run of a lost worker; neither one-shot ran again.
        expect(runs.filter((r) => r.name === 'long').map((r) => [r.outcome, r.reason])).toEqual([
          ['failed', 'worker-lost'],
        ]);
        expect(runs.filter((r) => r.name === 'once').map((r) => Number(r.scheduled_for))).toEqual([
          ONE_SHOT_AT,
        ]);
        expect(executions(marks)).toHaveLength(1);
        expect(executions(longMarks)).toHaveLength(1);
      } finally {
        await t.store.close();
      }
      // The source's process was not the copy's to end.
      expect(readStat(pid)?.state).toBe('S');
    }
  }

  it('refuses to back up a PostgreSQL store and points at pg_dump', async () => {
    const result = await ursa([
      'backup',
      join(tempDir('ursa-backup-'), 'x'),
      '--db',
      await database('postgres'),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pg_dump');
    expect(result.stderr).toContain('[BACKUP_UNSUPPORTED]');
  });
});
