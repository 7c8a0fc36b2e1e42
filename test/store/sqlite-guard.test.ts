import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { linkSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultEngines } from '../../src/engines/index.js';
import type { UrsaError } from '../../src/errors/index.js';
import { createLogger } from '../../src/log.js';
import { STORE_MARGIN_MS, Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, repositories, type Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { ursa } from '../support/cli.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { TEST_SETTINGS, testRuntime } from '../support/runtime.js';

// Decisions §5 (issue #19): one serving process per SQLite store, whatever path, link, host name
// or container it comes from; the store itself records who serves it. Short commands and an
// online backup work beside it. What Ursa creates for the store is owner-only.

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
// The worker's lease (leaseTtlMs, default) and the takeover margin, milliseconds.
const LEASE_MS = 5000 + STORE_MARGIN_MS;
const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void> | void)[] = [];

// A graceful stop, so that a worker ends the processes it runs (their grace is 0 here).
afterEach(async () => {
  await Promise.all(
    [...children].map(async (child) => {
      const exited = once(child, 'exit');
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
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
  const child = spawn(argv[0] as string, argv.slice(1), {
    env: { ...process.env, URSA_LOG_LEVEL: 'info', URSA_SHUTDOWN_GRACE: 'PT0S' },
  });
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

const RUNNING = /\{[^\n]*"msg":"ursa worker running"[^\n]*\}/;

/** What became of a started `ursa worker`: it serves (it logged that it runs), or it exited with a code. */
async function outcome(spawned: Spawned): Promise<'serving' | number> {
  let result: 'serving' | number | undefined;
  await eventually(() => {
    if (RUNNING.test(spawned.stdout)) result = 'serving';
    else if (spawned.child.exitCode !== null) result = spawned.child.exitCode;
    return result !== undefined;
  }, 'the start of a worker');
  return result as 'serving' | number;
}

/** A serving `ursa worker` on `db`, with its worker id, host and pid. */
interface First extends Spawned {
  readonly workerId: string;
  readonly host: string;
  readonly pid: number;
}

async function serving(db: string, wrap: readonly string[] = []): Promise<First> {
  const worker = spawnUrsa(['worker', '--db', db], wrap);
  expect(await outcome(worker)).toBe('serving');
  const line = JSON.parse((RUNNING.exec(worker.stdout) as RegExpExecArray)[0]) as { worker: string };
  return Object.assign(worker, { workerId: line.worker, host: hostname(), pid: worker.child.pid as number });
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The exact refusal of a second serving process, the holder's renewal instant aside. */
function lockedMessage(location: string, holder: First): RegExp {
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

/**
 * After a refusal: the first process still runs, its worker row is live and renewed after
 * `after` (UTC ms), and the store still names it as its serving process.
 */
async function stillServing(first: First, store: Store, after: number): Promise<void> {
  const row = () =>
    store.db
      .selectFrom('workers')
      .select(['heartbeat_at', 'stopped_at'])
      .where('id', '=', first.workerId)
      .executeTakeFirstOrThrow();
  await eventually(async () => Number((await row()).heartbeat_at) > after, 'a renewal');
  expect([first.child.exitCode, (await row()).stopped_at]).toEqual([null, null]);
  expect(await store.db.selectFrom('store_owner').select('worker_id').execute()).toEqual([
    { worker_id: first.workerId },
  ]);
}

/** A fresh store served by a `ursa worker` process; `longRunner` applies {@link applyLongRunner} first. */
async function served(options: { longRunner?: boolean } = {}) {
  const dir = folder();
  const db = join(dir, 'ursa.db');
  if (options.longRunner) await applyLongRunner(db);
  const first = await serving(db);
  const store = await storeAt(db);
  /** The correlation ids of the runs `workerId` holds started. */
  const running = (workerId: string) =>
    store.db
      .selectFrom('runs')
      .select('correlation_id')
      .where('worker_id', '=', workerId)
      .where('state', '=', 'started')
      .execute();
  return { dir, db, first, store, running };
}

describe('one serving process per SQLite store (decisions §5, issue #19)', { timeout: 60_000 }, () => {
  it('refuses a second worker through a symlinked path, and the first keeps its lease and its running run', async () => {
    const { dir, db, first, store, running } = await served({ longRunner: true });
    await eventually(async () => (await running(first.workerId)).length === 1, 'a started run');
    const before = await running(first.workerId);

    const link = join(dir, 'link.db');
    symlinkSync(db, link);
    const second = spawnUrsa(['worker', '--db', link]);
    expect(await outcome(second)).toBe(2);
    const refusedAt = Date.now();
    expect(second.stderr).toMatch(lockedMessage(link, first));

    await stillServing(first, store, refusedAt);
    // Nothing of the first's was reaped: its run still runs, and no run ended lost.
    expect(await running(first.workerId)).toEqual(before);
    const lost = await store.db
      .selectFrom('runs')
      .select('reason')
      .where('reason', '=', 'worker-lost')
      .execute();
    expect(lost).toEqual([]);
  });

  it('refuses a database file with a second name (hard link), for every command, while the first serves on', async () => {
    const { dir, db, first, store } = await served();
    const hard = join(dir, 'hard.db');
    linkSync(db, hard);
    const message = (file: string) =>
      `ursa: store: ${file}: the database file has 2 names (hard links); SQLite coordinates processes by the file's name, so opening it under another would corrupt it — remove the other links (find / -samefile ${file}) [STORE_UNAVAILABLE]\n`;

    const second = spawnUrsa(['worker', '--db', hard]);
    expect(await outcome(second)).toBe(2);
    expect(second.stderr).toBe(message(hard));
    // A short command under either name is refused too: its writes would go to another log.
    const list = await ursa(['list', '--db', hard]);
    expect([list.code, list.stderr]).toEqual([2, message(hard)]);

    await stillServing(first, store, Date.now());
    rmSync(hard);
    expect((await ursa(['list', '--db', db])).code).toBe(0);
  });

  it('refuses a second worker from another host name (a container on a shared volume)', async () => {
    const { db, first, store } = await served();
    const second = spawnUrsa(['worker', '--db', db], OTHER_HOST);
    expect(await outcome(second)).toBe(2);
    const refusedAt = Date.now();
    expect(second.stderr).toMatch(lockedMessage(db, first));
    await stillServing(first, store, refusedAt);
  });

  it('lets short commands and an online backup work beside a running worker, without taking the store', async () => {
    const { dir, db, first, store } = await served({ longRunner: true });
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
    const read = new SQLite(backup, { readonly: true });
    const documents = read
      .prepare("select path from documents where path like '_vance/%/long.yaml' order by path")
      .all();
    read.close();
    expect(documents).toEqual([{ path: '_vance/recipes/long.yaml' }, { path: '_vance/scheduler/long.yaml' }]);
    // Issue #26: `ursa backup` from the command's own connection, and a live copy, beside the worker.
    const ursaBackup = join(dir, 'ursa-backup.db');
    expect(await ursa(['backup', ursaBackup, '--db', db], { now })).toMatchObject({ code: 0, stderr: '' });
    const restored = await ursa(['restore', ursaBackup, '--db', join(dir, 'restored.db')], { now });
    expect([restored.code, restored.stderr]).toEqual([0, '']);
    const copy = ['store', 'copy', '--from', db, '--to', join(dir, 'copied.db')];
    expect((await ursa(copy, { now: new Date().toISOString() })).stderr).toContain('[STORE_IN_USE]');
    expect(await ursa([...copy, '--live'], { now: new Date().toISOString() })).toMatchObject({ code: 0 });

    await stillServing(first, store, Date.now());
  });

  it("refuses a newcomer while a killed worker's lease holds, takes the store over once it lapsed, and releases it on a clean stop", async () => {
    const { db, first, store } = await served();
    const owner = repositories(store).owner;
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const dead = await owner.holder();
    const heartbeatAt = dead?.heartbeatAt as number;

    // A newcomer on the same store, with a clock the test sets (the lease is wall-clock time).
    const clock = fixedClock(heartbeatAt + LEASE_MS);
    const rt = {
      repos: repositories(store),
      clock,
      settings: TEST_SETTINGS,
      engines: defaultEngines(),
      log: createLogger('silent'),
    };
    const newcomer = new Worker(rt, { exclusive: true, heartbeatMs: 20 });
    // Not waiting: the lease holds to its last millisecond.
    const refusal = await newcomer.takeStore(0).catch((error: unknown) => error);
    expect([(refusal as UrsaError).code, (refusal as UrsaError).message]).toEqual([
      'STORE_LOCKED',
      `store: ${db} is served by another Ursa process (worker ${first.workerId}, host ${first.host}, pid ${first.pid}, lease renewed ${new Date(heartbeatAt).toISOString().replace('.000Z', 'Z')}); a SQLite store serves one process — stop that one first, or use PostgreSQL (--db postgres://…) for several workers`,
    ]);
    expect((await owner.holder())?.workerId).toBe(first.workerId);

    // Waiting (as a restart does): the holder renews no more, and once its lease lapsed it is taken.
    const taking = newcomer.takeStore(10_000);
    await new Promise((r) => setTimeout(r, 50));
    expect((await owner.holder())?.workerId).toBe(first.workerId);
    clock.set(heartbeatAt + LEASE_MS + 1);
    await taking;
    const taken = await owner.holder();
    expect([taken?.workerId, taken?.stoppedAt, taken?.since]).toEqual([
      newcomer.id,
      null,
      heartbeatAt + LEASE_MS + 1,
    ]);
    const old = await store.db
      .selectFrom('workers')
      .select('stopped_at')
      .where('id', '=', first.workerId)
      .executeTakeFirst();
    expect(old).toEqual({ stopped_at: heartbeatAt + LEASE_MS + 1 });

    await newcomer.stop();
    expect(await store.db.selectFrom('store_owner').selectAll().execute()).toEqual([]);
  });

  it('lets a newcomer take the store of a frozen worker once its lease lapsed; the frozen one, thawed, exits without claiming', async () => {
    const { db, first, store, running } = await served({ longRunner: true });
    const runsOf = async (workerId: string) =>
      Number(
        (
          await store.db
            .selectFrom('runs')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('worker_id', '=', workerId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const servedBy = () => store.db.selectFrom('store_owner').select('worker_id').execute();
    await eventually(async () => (await running(first.workerId)).length === 1, 'a started run');
    first.child.kill('SIGSTOP');

    // The newcomer waits: the holder renews no more, and when its lease lapsed the store is taken.
    const second = spawnUrsa(['worker', '--db', db]);
    expect(await outcome(second)).toBe('serving');
    const taker = (JSON.parse((RUNNING.exec(second.stdout) as RegExpExecArray)[0]) as { worker: string })
      .worker;
    expect(await servedBy()).toEqual([{ worker_id: taker }]);
    // The frozen one's run was ended lost by the newcomer, which runs its own now.
    await eventually(async () => (await running(taker)).length === 1, "the newcomer's started run");
    expect(await running(first.workerId)).toEqual([]);
    const before = await runsOf(first.workerId);

    first.child.kill('SIGCONT');
    const [code] = (await once(first.child, 'exit')) as [number];
    expect([code, first.stderr]).toEqual([
      2,
      `ursa: store: ${db}: another Ursa process took this store over while this one stalled past its lease; this one stopped — a SQLite store serves one process, use PostgreSQL (--db postgres://…) for several workers [STORE_LOCKED]\n`,
    ]);
    // The thawed one claimed nothing, and released nothing of the newcomer's.
    expect(await runsOf(first.workerId)).toBe(before);
    expect(await servedBy()).toEqual([{ worker_id: taker }]);
    expect((await running(taker)).length).toBe(1);
    expect(second.child.exitCode).toBe(null);
  });

  it('stops a worker whose store was taken over while it stalled: it can write no run, and learns it at its next heartbeat', async () => {
    const t = await testRuntime('2026-06-01T08:00:00Z');
    cleanups.push(() => t.close());
    const dir = projectFolder({
      '_vance/recipes/noop.yaml': 'description: n\nengine: noop\n',
      '_vance/scheduler/every.yaml': cronScheduler('* * * * * *', 'noop'),
    });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await applyDirectory(t.rt, dir, 'default', 'demo', libraryActor('admin'));

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
      `store: this process no longer serves the store — another process took it over after this one's lease lapsed; nothing was written`,
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
    expect((await taker.tick()).claimed).toBe(1);
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
