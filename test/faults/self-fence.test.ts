import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/index.js';
import { systemClock } from '../../src/time/clock.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { runtimeOn, TcpProxy, throughProxy } from '../support/faults.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5 fencing), PostgreSQL, two worker processes: a worker that cannot renew
// its lease — its event loop blocked, or its store connection cut — ends its running process
// groups before its lease expires, and the other worker starts the scheduler only after that.
// Everything asserted about processes comes from the marks the runs' own processes write.

const WORKER = resolve(import.meta.dirname, 'fence-worker.mjs');
/** A short lease, so that the tests are quick: fenced 700 ms after the last renewal, taken over after 1.8 s. */
const LEASE = { heartbeatMs: 200, leaseTtlMs: 1500, takeoverMarginMs: 300, fenceGraceMs: 300 };
const T = 'acme';
const P = 'ops';
// Appends `start <pid> <ms> <correlationId>`, and `end <pid> <ms>` when it gets SIGTERM (which it
// then ignores, so a second one cannot cut the line short).
const SCRIPT = [
  'echo "start $$ $(date +%s%3N) $URSA_CORRELATION_ID" >> "$URSA_PARAM_MARKS"',
  `trap 'trap "" TERM; echo "end $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"; exit 0' TERM`,
  'sleep 30 & wait',
].join('\n');

let database: TestDatabase | undefined;
let store: Store | undefined;
let proxy: TcpProxy | undefined;
let dir: string | undefined;
const workers = new Set<ChildProcess>();

afterEach(async () => {
  await Promise.all([...workers].map((child) => stopWorker(child)));
  workers.clear();
  // Whatever a run left (a worker killed mid-run leaves its group): the marks name every group.
  if (dir !== undefined) for (const mark of readMarks(join(dir, 'marks'))) killGroup(mark.pid);
  await proxy?.close();
  await store?.close();
  await database?.drop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  proxy = store = database = dir = undefined;
});

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** A clean stop (SIGTERM), or SIGKILL when it does not come within 5 s (a worker cut off its store). */
async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

interface Mark {
  readonly kind: 'start' | 'end';
  readonly pid: number;
  readonly at: number;
  /** The run's, on a start mark. */
  readonly correlationId?: string;
}

function readMarks(file: string): Mark[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [kind, pid, at, correlationId] = line.split(' ');
      return {
        kind: kind as Mark['kind'],
        pid: Number(pid),
        at: Number(at),
        ...(correlationId === undefined ? {} : { correlationId }),
      };
    });
}

/** Each run's process as its marks say: from its start to its end (none: still running). */
function lifetimes(marks: readonly Mark[]): { pid: number; start: number; end: number | undefined }[] {
  return marks
    .filter((m) => m.kind === 'start')
    .map((s) => ({
      pid: s.pid,
      start: s.at,
      end: marks.find((m) => m.kind === 'end' && m.pid === s.pid)?.at,
    }));
}

/** Every pair of runs whose processes were alive at the same time. */
function overlaps(marks: readonly Mark[]): string[] {
  const lives = lifetimes(marks);
  const found: string[] = [];
  for (const [i, a] of lives.entries())
    for (const b of lives.slice(i + 1))
      if (a.start < (b.end ?? Number.POSITIVE_INFINITY) && b.start < (a.end ?? Number.POSITIVE_INFINITY))
        found.push(`${a.pid} and ${b.pid}`);
  return found;
}

/** `until`, for up to `ms`: the takeover comes seconds after the fault. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await until(condition, what);
    } catch (error) {
      if (Date.now() >= end) throw error;
    }
  }
}

/** A fresh PostgreSQL database; the marks file is in a fresh folder. */
async function setup(): Promise<{ location: string; marks: string }> {
  database = await freshDatabase('postgres');
  store = await openStore(database.location);
  dir = mkdtempSync(join(tmpdir(), 'ursa-fence-'));
  return { location: database.location, marks: join(dir, 'marks') };
}

/** One `overlap: skip` scheduler every second, whose run lasts 30 s and writes `marks`. */
async function applyScheduler(marks: string): Promise<void> {
  const project = projectFolder({
    '_vance/recipes/long.yaml': shellRecipe(SCRIPT),
    '_vance/scheduler/long.yaml': cronScheduler(
      '* * * * * *',
      'long',
      `overlap: skip\nparams:\n  marks: ${JSON.stringify(marks)}\n`,
    ),
  });
  try {
    await applyDirectory(runtimeOn(store as Store, systemClock), project, T, P, libraryActor('alice'));
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

interface StartedWorker {
  readonly child: ChildProcess;
  readonly id: string;
  /** What it wrote so far, for a failure's message. */
  log(): string;
}

/** A worker process on `db`; resolves once it serves (it printed its id). */
async function startWorker(db: string, block?: { ms: number; lock: string }): Promise<StartedWorker> {
  const child = spawn(process.execPath, [WORKER, JSON.stringify({ db, lease: LEASE, block })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const serving = () => /^\{"worker":"([^"]+)"\}$/m.exec(out)?.[1];
  await eventually(() => serving() !== undefined || child.exitCode !== null, 'the worker serving');
  expect(child.exitCode, err).toBe(null);
  return { child, id: serving() as string, log: () => `${out}${err}` };
}

/** The worker that holds the run of a start mark. */
async function holder(mark: Mark): Promise<string | null | undefined> {
  const row = await (store as Store).db
    .selectFrom('runs')
    .select('worker_id')
    .where('correlation_id', '=', mark.correlationId as string)
    .executeTakeFirst();
  return row?.worker_id;
}

/**
 * Waits for the first run's process to start, then (after `fault`) for a process of another run;
 * returns the first start, its end (if any) and the next start.
 */
async function firstAndNext(marks: string, fault: () => Promise<void> | void) {
  await eventually(() => readMarks(marks).length > 0, 'the first run started');
  const [first] = readMarks(marks) as [Mark];
  await fault();
  await eventually(
    () => readMarks(marks).some((m) => m.kind === 'start' && m.pid !== first.pid),
    'another run starting',
  );
  const all = readMarks(marks);
  return {
    all,
    first,
    ended: all.find((m) => m.kind === 'end' && m.pid === first.pid),
    next: all.find((m) => m.kind === 'start' && m.pid !== first.pid) as Mark,
  };
}

describe('a worker that cannot renew its lease fences itself (PostgreSQL, two workers; issue #20)', () => {
  it('its event loop blocked for twice the lease: its run is ended before the other worker starts that scheduler, and no two runs overlap', {
    timeout: 90_000,
  }, async () => {
    const { location, marks } = await setup();
    const block = { ms: 2 * LEASE.leaseTtlMs, lock: join(dir as string, 'blocked') };
    // Both serve before the scheduler exists: whichever starts its first run blocks (once).
    const both = await Promise.all([startWorker(location, block), startWorker(location, block)]);
    await applyScheduler(marks);
    const { all, first, ended, next } = await firstAndNext(marks, () => {});
    const [blocked, other] = both[0].id === (await holder(first)) ? both : [both[1], both[0]];
    expect(ended, blocked.log()).toBeDefined();
    // Ended by the watchdog while the loop was still blocked, before the other worker started.
    expect((ended as Mark).at).toBeLessThan(first.at + block.ms);
    expect((ended as Mark).at).toBeLessThan(next.at);
    expect(await holder(next)).toBe(other.id);
    expect(overlaps(all)).toEqual([]);
    // No request was in flight: the stalled worker itself lives on.
    expect(blocked.child.exitCode).toBe(null);
  });

  it('its store connection cut: it ends its run itself, and the other worker takes over without overlap', {
    timeout: 90_000,
  }, async () => {
    const { location, marks } = await setup();
    const server = new URL(location);
    proxy = await TcpProxy.start(server.hostname, Number(server.port || 5432));
    const cutOff = await startWorker(throughProxy(location, proxy));
    await applyScheduler(marks);
    let other: StartedWorker | undefined;
    let cutAt = 0;
    const { all, first, ended, next } = await firstAndNext(marks, async () => {
      other = await startWorker(location);
      cutAt = Date.now();
      proxy?.cut();
    });
    expect(await holder(first)).toBe(cutOff.id);
    expect(ended, cutOff.log()).toBeDefined();
    // Within the lease of its last renewal, which came before the cut.
    expect((ended as Mark).at).toBeLessThan(cutAt + LEASE.leaseTtlMs);
    expect((ended as Mark).at).toBeLessThan(next.at);
    expect(await holder(next)).toBe(other?.id);
    expect(overlaps(all)).toEqual([]);
  });
});
