import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultEngines } from '../../src/engines/index.js';
import { createLogger } from '../../src/log.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { ACTIVE_STATUSES, openStore, repositories } from '../../src/store/index.js';
import { systemClock } from '../../src/time/clock.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { coverage } from '../support/faults.js';
import { projectFolder } from '../support/project.js';

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const SCHEDULERS = 100;
const WORKERS = 3;
const CHAOS_MS = 35_000;
const CALM_MS = 8_000; // longer than the lease (5 s): every lost worker's runs are finished by then
const live = new Set<ChildProcess>();

afterAll(() => {
  for (const child of live) child.kill('SIGKILL');
});

function startWorker(
  args: string[],
  env: Record<string, string> = {},
  stderr: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, URSA_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', stderr],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** A fixed-seed generator, so a failing run can be replayed with the same kill pattern. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

// decisions §4, §5 (issue #4): workers killed at random lose no occurrence and double none.
describe('three workers on PostgreSQL, one killed with SIGKILL every few seconds', () => {
  let database: TestDatabase;
  afterAll(async () => database?.drop());

  it('claims every occurrence once or coalesces it, and leaves nothing running', {
    timeout: 120_000,
  }, async () => {
    database = await freshDatabase('postgres');
    const store = await openStore(database.location);
    const rt = {
      repos: repositories(store),
      clock: systemClock,
      settings: { misfireThresholdMs: 60_000, runLogRetentionDays: -1, shutdownGraceMs: 5_000 },
      engines: defaultEngines(),
      log: createLogger('silent'),
    };
    const files: Record<string, string> = {};
    for (let i = 0; i < SCHEDULERS; i++) {
      files[`_vance/scheduler/s${String(i).padStart(3, '0')}.yaml`] =
        'description: every second\ncron: "* * * * * *"\nrecipe: noop\n';
    }
    const applied = await applyDirectory(rt, projectFolder(files), 'acme', 'ops', libraryActor('alice'));
    expect(applied.filter((e) => e.status === 'created')).toHaveLength(SCHEDULERS);

    const args = ['worker', '--db', database.location];
    const env = { URSA_RUN_LOG_RETENTION_DAYS: '-1' };
    const workers = Array.from({ length: WORKERS }, () => startWorker(args, env));
    const random = seeded(20261129);
    const started = Date.now();
    let kills = 0;
    while (Date.now() - started < CHAOS_MS) {
      await delay(2_000 + random() * 3_000);
      const victim = Math.floor(random() * WORKERS);
      const child = workers[victim] as ChildProcess;
      child.kill('SIGKILL');
      await once(child, 'exit');
      kills++;
      workers[victim] = startWorker(args, env);
    }
    const chaosEnd = Date.now();
    await delay(CALM_MS);
    for (const child of workers) child.kill('SIGTERM');
    await Promise.all(workers.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
    expect(kills).toBeGreaterThanOrEqual(5);

    const db = store.db;
    // 1. No occurrence twice — and the constraint that forbids it is in place.
    const doubled = await db
      .selectFrom('runs')
      .select(['name', 'scheduled_for', (eb) => eb.fn.countAll().as('n')])
      .groupBy(['name', 'scheduled_for'])
      .having((eb) => eb.fn.countAll(), '>', 1)
      .execute();
    expect(doubled).toEqual([]);
    const constraint = await db
      .selectFrom('information_schema.table_constraints' as never)
      .select('constraint_name' as never)
      .where('table_name' as never, '=', 'runs' as never)
      .where('constraint_type' as never, '=', 'UNIQUE' as never)
      .execute();
    expect(constraint).toEqual([{ constraint_name: 'runs_occurrence' }]);

    // 2. Every occurrence of the chaos window is a run, or absorbed by a coalesced one (decisions §4).
    const runs = await db
      .selectFrom('runs')
      .select(['name', 'scheduled_for', 'coalesced', 'coalesced_until', 'state', 'outcome'])
      .execute();
    const from = Math.ceil(started / 1000) * 1000 + 2000;
    const to = Math.floor(chaosEnd / 1000) * 1000;
    const names = Array.from({ length: SCHEDULERS }, (_, i) => `s${String(i).padStart(3, '0')}`);
    expect(coverage(runs, names, from, to, 1000)).toEqual({ missing: [], doubled: [] });

    // 3. Nothing is left running without a live worker.
    expect(runs.filter((r) => r.state === 'claimed' || r.state === 'started')).toEqual([]);
    const active = await db
      .selectFrom('processes')
      .select('id')
      .where('status', 'in', [...ACTIVE_STATUSES])
      .execute();
    expect(active).toEqual([]);
    // And the workers kept up: at least ten runs per scheduler over the ~45 s.
    expect(runs.length).toBeGreaterThan(SCHEDULERS * 10);
    await store.close();
  });
});
