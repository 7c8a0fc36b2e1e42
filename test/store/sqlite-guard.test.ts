import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { linkSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultEngines } from '../../src/engines/index.js';
import { UrsaError } from '../../src/errors/index.js';
import { createLogger } from '../../src/log.js';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { openStore, repositories, type Store, type StoreHolder } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { ursa } from '../support/cli.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { TEST_SETTINGS, testRuntime } from '../support/runtime.js';

// Decisions §5 (issue #19): one serving process per SQLite store, whatever path, link, host name
// or container it comes from; the store itself records who serves it. Short commands and an
// online backup work beside it. What Ursa creates for the store is owner-only.

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const LEASE_MS = 5000 + 2000; // the worker's lease (leaseTtlMs) and the takeover margin
const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-guard-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function storeAt(location: string): Promise<Store> {
  const store = await openStore(location);
  cleanups.push(() => store.close());
  return store;
}

interface Spawned {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
}

/** Runs the command after it (`"$0" "$@"`) in its own host name, as a container would. */
const OTHER_HOST = ['unshare', '--uts', 'sh', '-c', 'hostname other-host && exec "$0" "$@"'];
/** Runs the command after it with a umask that takes nothing away. */
const NO_UMASK = ['sh', '-c', 'umask 000 && exec "$0" "$@"'];

/**
 * `ursa <args>` as a process of its own, through `wrap` (a command that ends by exec-ing the
 * rest of its arguments, so the child's pid is the `ursa` process's).
 */
function spawnUrsa(args: string[], wrap: readonly string[] = []): Spawned {
  const argv = [...wrap, process.execPath, BIN, ...args];
  const child = spawn(argv[0] as string, argv.slice(1), { env: { ...process.env, URSA_LOG_LEVEL: 'info' } });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const spawned: Spawned = { child, stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => {
    spawned.stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    spawned.stderr += chunk.toString();
  });
  return spawned;
}

/** Polls `condition` (a process's output, a store read) for work another process does, up to 20 s. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} never happened`);
}

/** A `ursa worker` on `db` that is serving: it logged that it runs. */
async function serving(db: string, wrap: readonly string[] = []): Promise<Spawned> {
  const worker = spawnUrsa(['worker', '--db', db], wrap);
  await eventually(() => worker.stdout.includes('"msg":"ursa worker running"'), 'the first worker start');
  return worker;
}

async function exitOf(spawned: Spawned): Promise<number> {
  if (spawned.child.exitCode !== null) return spawned.child.exitCode;
  const [code] = (await once(spawned.child, 'exit')) as [number];
  return code;
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The exact refusal of a second serving process, the holder's renewal instant aside. */
function lockedMessage(location: string, holder: { workerId: string; host: string; pid: number }): RegExp {
  return new RegExp(
    `^ursa: store: ${literal(location)} is served by another Ursa process \\(worker ${literal(holder.workerId)}, host ${literal(holder.host)}, pid ${holder.pid}, lease renewed \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z\\); a SQLite store serves one process — stop that one first, or use PostgreSQL \\(--db postgres://…\\) for several workers \\[STORE_LOCKED\\]\\n$`,
  );
}

/** A project whose scheduler starts a long process every second (one at a time). */
async function applyLongRunner(db: string): Promise<void> {
  const dir = projectFolder({
    '_vance/recipes/long.yaml': shellRecipe('sleep 60'),
    '_vance/scheduler/long.yaml': cronScheduler('* * * * * *', 'long', 'overlap: skip\n'),
  });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const applied = await ursa(['apply', dir, '--db', db], { now: new Date().toISOString() });
  expect(applied.code).toBe(0);
}

/** After a refusal: the first process still runs, the store still names it and it keeps renewing. */
async function stillServing(first: Spawned, store: Store, workerId: string, after: number): Promise<void> {
  const owner = repositories(store).owner;
  await eventually(async () => ((await owner.holder())?.heartbeatAt ?? 0) > after, 'a renewal');
  expect(first.child.exitCode).toBe(null);
  const holder = await owner.holder();
  expect([holder?.workerId, holder?.stoppedAt]).toEqual([workerId, null]);
}

describe('one serving process per SQLite store (decisions §5, issue #19)', { timeout: 60_000 }, () => {
  it('refuses a second worker through a symlinked path, and the first keeps its lease and its running run', async () => {
    const dir = folder();
    const db = join(dir, 'ursa.db');
    await applyLongRunner(db);
    const first = await serving(db);
    const store = await storeAt(db);
    const started = () =>
      store.db
        .selectFrom('runs')
        .select(['correlation_id', 'outcome', 'worker_id'])
        .where('state', '=', 'started')
        .execute();
    await eventually(async () => (await started()).length === 1, 'a started run');
    const running = await started();
    const holder = (await repositories(store).owner.holder()) as StoreHolder;
    expect([holder.pid, holder.stoppedAt]).toEqual([first.child.pid, null]);

    const link = join(dir, 'link.db');
    symlinkSync(db, link);
    const second = spawnUrsa(['worker', '--db', link]);
    expect(await exitOf(second)).toBe(2);
    const refusedAt = Date.now();
    expect(second.stderr).toMatch(lockedMessage(link, holder));

    await stillServing(first, store, holder.workerId, refusedAt);
    // Nothing of the first's was reaped: its run still runs, and no run ended lost.
    expect(await started()).toEqual(running);
    expect(running[0]?.worker_id).toBe(holder.workerId);
    const lost = await store.db
      .selectFrom('runs')
      .select('reason')
      .where('reason', '=', 'worker-lost')
      .execute();
    expect(lost).toEqual([]);
  });

  it('refuses a database file with a second name (hard link), for every command, while the first serves on', async () => {
    const dir = folder();
    const db = join(dir, 'ursa.db');
    const first = await serving(db);
    const store = await storeAt(db);
    const holder = await repositories(store).owner.holder();
    const hard = join(dir, 'hard.db');
    linkSync(db, hard);
    cleanups.push(() => rmSync(hard, { force: true }));
    const message = (file: string) =>
      `ursa: store: ${file}: the database file has 2 names (hard links); SQLite coordinates processes by the file's name, so opening it under another would corrupt it — remove the other links (find / -samefile ${file}) [STORE_UNAVAILABLE]\n`;

    const second = spawnUrsa(['worker', '--db', hard]);
    expect(await exitOf(second)).toBe(2);
    expect(second.stderr).toBe(message(hard));
    // A short command through either name is refused too: its writes would go to another log.
    const list = await ursa(['list', '--db', hard]);
    expect([list.code, list.stderr]).toEqual([2, message(hard)]);

    await stillServing(first, store, holder?.workerId as string, Date.now());
    rmSync(hard);
    expect((await ursa(['list', '--db', db])).code).toBe(0);
  });

  it('refuses a second worker from another host name (a container on a shared volume)', async () => {
    const dir = folder();
    const db = join(dir, 'ursa.db');
    const first = await serving(db);
    const store = await storeAt(db);
    const holder = await repositories(store).owner.holder();

    const second = spawnUrsa(['worker', '--db', db], OTHER_HOST);
    expect(await exitOf(second)).toBe(2);
    const refusedAt = Date.now();
    expect(second.stderr).toMatch(lockedMessage(db, holder as NonNullable<typeof holder>));
    await stillServing(first, store, holder?.workerId as string, refusedAt);
  });

  it('lets short commands and an online backup work beside a running worker, without taking the store', async () => {
    const dir = folder();
    const db = join(dir, 'ursa.db');
    await applyLongRunner(db);
    const first = await serving(db);
    const store = await storeAt(db);
    const holder = await repositories(store).owner.holder();
    const now = new Date().toISOString();

    const results = [];
    for (const args of [
      ['list'],
      ['get', 'long'],
      ['fire', 'long'],
      ['runs', 'long'],
      ['doc', 'ls', '_vance/'],
      ['token', 'list'],
    ]) {
      const run = await ursa([...args, '--db', db], { now });
      results.push([args.join(' '), run.code, run.stderr]);
    }
    expect(results).toEqual([
      ['list', 0, ''],
      ['get long', 0, ''],
      ['fire long', 0, ''],
      ['runs long', 0, ''],
      ['doc ls _vance/', 0, ''],
      ['token list', 0, ''],
    ]);
    const backup = join(dir, 'backup.db');
    const source = new SQLite(db, { readonly: true });
    await source.backup(backup);
    source.close();
    const copy = new SQLite(backup, { readonly: true });
    const documents = copy
      .prepare("select path from documents where path like '_vance/%/long.yaml' order by path")
      .all();
    copy.close();
    expect(documents).toEqual([{ path: '_vance/recipes/long.yaml' }, { path: '_vance/scheduler/long.yaml' }]);

    await stillServing(first, store, holder?.workerId as string, Date.now());
  });

  it('takes over the store of a killed worker only once its lease lapsed, and releases it on a clean stop', async () => {
    const dir = folder();
    const db = join(dir, 'ursa.db');
    const first = await serving(db);
    const store = await storeAt(db);
    const owner = repositories(store).owner;
    const dead = await owner.holder();
    first.child.kill('SIGKILL');
    await exitOf(first);

    // A newcomer on the same store, with a clock the test sets (the lease is wall-clock time).
    const clock = fixedClock(Date.now());
    const newcomer = new Worker(
      {
        repos: repositories(store),
        clock,
        settings: TEST_SETTINGS,
        engines: defaultEngines(),
        log: createLogger('silent'),
      },
      { exclusive: true, heartbeatMs: 60_000 },
    );
    const heartbeatAt = dead?.heartbeatAt as number;
    clock.set(heartbeatAt + LEASE_MS);
    const refusal = await newcomer.takeStore().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UrsaError);
    expect((refusal as UrsaError).code).toBe('STORE_LOCKED');
    expect((await owner.holder())?.workerId).toBe(dead?.workerId);

    clock.set(heartbeatAt + LEASE_MS + 1);
    await newcomer.takeStore();
    const taken = await owner.holder();
    expect([taken?.workerId, taken?.stoppedAt, taken?.since]).toEqual([
      newcomer.id,
      null,
      heartbeatAt + LEASE_MS + 1,
    ]);
    const old = await store.db
      .selectFrom('workers')
      .select('stopped_at')
      .where('id', '=', dead?.workerId as string)
      .executeTakeFirst();
    expect(old).toEqual({ stopped_at: heartbeatAt + LEASE_MS + 1 });

    await newcomer.stop();
    expect(await owner.holder()).toBe(undefined);
    expect(await store.db.selectFrom('store_owner').selectAll().execute()).toEqual([]);
  });

  it('stops a worker whose store was taken over while it stalled: it can write no run, and learns it at its next heartbeat', async () => {
    const t = await testRuntime('2026-06-01T08:00:00Z');
    cleanups.push(() => t.close());
    const dir = projectFolder({
      '_vance/recipes/noop.yaml': 'description: n\nengine: noop\n',
      '_vance/scheduler/every.yaml': cronScheduler('* * * * * *', 'noop'),
    });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await applyDirectory(t.rt, dir, 'default', 'demo', 'admin');

    const stalled = t.worker({ exclusive: true, heartbeatMs: 60_000, acquireAheadMs: 0 });
    await stalled.takeStore();
    await stalled.bootstrap();
    t.clock.advance(LEASE_MS + 1);
    const peer = await t.peer();
    const taker = t.worker({ exclusive: true, heartbeatMs: 60_000, acquireAheadMs: 0 }, peer);
    await taker.takeStore();

    // The stalled worker's claim is refused by the store, whole: no run of it exists.
    const refused = await stalled.tick().catch((error: unknown) => error);
    expect([(refused as UrsaError).code, (refused as UrsaError).message]).toEqual([
      'STORE_LOCKED',
      `store: ${t.location}: this process no longer serves the store — another process took it over after this one's lease lapsed; nothing was written`,
    ]);
    expect(await t.store.db.selectFrom('runs').select('worker_id').execute()).toEqual([]);
    let lost = false;
    void stalled.lost.then(() => {
      lost = true;
    });
    await stalled.heartbeat();
    await new Promise((r) => setImmediate(r));
    expect(lost).toBe(true);
    await stalled.stop();

    // The taker serves on: the store still names it, and it claims.
    expect((await peer.repos.owner.holder())?.workerId).toBe(taker.id);
    await taker.bootstrap();
    const result = await taker.tick();
    expect(result.claimed).toBe(1);
    await taker.executor.settled();
    await taker.stop();
  });

  it('creates the store folder owner-only and the file, its log and shared memory readable by the owner only, whatever the umask', async () => {
    const dir = folder();
    const db = join(dir, 'a', 'b', 'ursa.db');
    await serving(db, NO_UMASK);
    const modes = Object.fromEntries(
      ['a', 'a/b', 'a/b/ursa.db', 'a/b/ursa.db-wal', 'a/b/ursa.db-shm'].map((p) => [
        p,
        (statSync(join(dir, p)).mode & 0o777).toString(8),
      ]),
    );
    expect(modes).toEqual({
      a: '700',
      'a/b': '700',
      'a/b/ursa.db': '600',
      'a/b/ursa.db-wal': '600',
      'a/b/ursa.db-shm': '600',
    });
  });
});
