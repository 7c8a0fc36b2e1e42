import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/index.js';
import { systemClock } from '../../src/time/clock.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { runtimeOn } from '../support/faults.js';
import { httpRecipe } from '../support/http-run.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5 fencing): when a worker's event loop is blocked past its lease, its
// watchdog thread ends its process groups, and ends the worker process itself only if engine
// calls that own no process group (`http` requests, which only the main thread can abort) are in
// flight. Those are counted for scheduler runs and workflow steps alike, and only once their
// engine was entered: a shell step beside an `http` run does not hide the request, an `http` step
// counts, and a run registered but not entered yet counts for nothing. A worker process on
// PostgreSQL; what its runs' processes did comes from their marks.

const WORKER = resolve(import.meta.dirname, 'requests-worker.mjs');
/** Fenced 700 ms after the last renewal: the watchdog's SIGKILL comes 300 ms later. */
const LEASE = { heartbeatMs: 200, leaseTtlMs: 1500, takeoverMarginMs: 300, fenceGraceMs: 300 };
const BLOCK_MS = 2 * LEASE.leaseTtlMs;
const T = 'acme';
const P = 'ops';
const SLOW = { timeout: 60_000 };
// Marks `start <pid>`, and `term <pid>` when it gets SIGTERM (then exits).
const STEP = [
  `trap 'echo "term $$" >> "$URSA_PARAM_MARKS"; exit 0' TERM`,
  'echo "start $$" >> "$URSA_PARAM_MARKS"',
  'sleep 30 & wait',
].join('\n');

let database: TestDatabase | undefined;
let store: Store | undefined;
let server: Server | undefined;
let dir: string | undefined;
const workers = new Set<ChildProcess>();

afterEach(async () => {
  for (const child of workers) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
  workers.clear();
  // What a killed worker left running: its marks name every group.
  for (const pid of marks()
    .filter((m) => m.kind === 'start')
    .map((m) => m.pid)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  server?.closeAllConnections();
  await new Promise((done) => (server === undefined ? done(undefined) : server.close(done)));
  await store?.close();
  await database?.drop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  server = store = database = dir = undefined;
});

function marks(): { kind: string; pid: number }[] {
  const file = dir === undefined ? undefined : join(dir, 'marks');
  if (file === undefined || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, pid] = line.split(' ');
      return { kind: kind as string, pid: Number(pid) };
    });
}

/** A receiver that never answers; each request notes whether its connection closed. */
async function silentReceiver() {
  const requests: { closed: boolean }[] = [];
  server = createServer((req) => {
    const request = { closed: false };
    requests.push(request);
    req.socket.on('close', () => {
      request.closed = true;
    });
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests };
}

/** `until`, for up to `ms`: runs start a second or two after the worker serves. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await until(condition, what);
    } catch (error) {
      if (Date.now() >= end) throw error;
    }
  }
}

/** A fresh PostgreSQL database with `files` applied to acme/ops; the marks go to a fresh folder. */
async function setup(files: (marks: string) => Record<string, string>): Promise<string> {
  database = await freshDatabase('postgres');
  store = await openStore(database.location);
  dir = mkdtempSync(join(tmpdir(), 'ursa-requests-'));
  const project = projectFolder(files(join(dir, 'marks')));
  try {
    await applyDirectory(runtimeOn(store, systemClock), project, T, P, libraryActor('alice'));
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
  return database.location;
}

interface StartedWorker {
  readonly child: ChildProcess;
  /** What it printed on standard output so far. */
  out(): string;
  /** Resolves with its exit signal (null: it exited by itself), or 'unblocked' once its block ended alive. */
  readonly outcome: Promise<string | null>;
  log(): string;
}

/** A worker process on `db` whose loop blocks for {@link BLOCK_MS} `at` a point (see requests-worker.mjs). */
async function startWorker(db: string, at: 'signal' | 'pre-entry'): Promise<StartedWorker> {
  const child = spawn(
    process.execPath,
    [WORKER, JSON.stringify({ db, lease: LEASE, blockMs: BLOCK_MS, at })],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  workers.add(child);
  let out = '';
  let err = '';
  let unblocked: () => void = () => {};
  const outcome = new Promise<string | null>((done) => {
    unblocked = () => done('unblocked');
    child.once('exit', (_code, signal) => done(signal));
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('unblocked\n')) unblocked();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  await eventually(() => out.includes('{"worker":') || child.exitCode !== null, 'the worker serving');
  expect(child.exitCode, err).toBe(null);
  return { child, out: () => out, outcome, log: () => `${out}${err}` };
}

const workflow = (recipe: string) => `description: one step\nsteps:\n  - name: only\n    recipe: ${recipe}\n`;
const everySecond = (target: string) =>
  `description: every second\ncron: "* * * * * *"\ntimezone: UTC\n${target}\noverlap: skip\n`;

describe('the lease watchdog counts the requests only the main thread can abort (PostgreSQL; issue #20)', () => {
  it(
    'an http run in flight beside a shell workflow step, the loop blocked past the lease: the worker process is ended, the step’s group first',
    SLOW,
    async () => {
      const receiver = await silentReceiver();
      const db = await setup((file) => ({
        '_vance/recipes/hook.yaml': httpRecipe(receiver.url, {}, 'PT60S'),
        '_vance/recipes/step.yaml': shellRecipe(STEP, { marks: file }),
        '_vance/workflows/flow.yaml': workflow('step'),
        '_vance/scheduler/hook.yaml': everySecond('recipe: hook'),
        '_vance/scheduler/flow.yaml': everySecond('workflow: flow'),
      }));
      const worker = await startWorker(db, 'signal');
      await eventually(
        () => receiver.requests.length === 1 && marks().some((m) => m.kind === 'start'),
        'the request and the step in flight',
      );
      worker.child.kill('SIGUSR2');
      expect(await worker.outcome, worker.log()).toBe('SIGKILL');
      expect(worker.out()).not.toContain('unblocked');
      // The step's group got the watchdog's SIGTERM; the request's connection closed with the process.
      expect(marks().map((m) => m.kind)).toEqual(['start', 'term']);
      await eventually(() => receiver.requests[0]?.closed === true, 'the request’s connection closed');
    },
  );

  it(
    'an http workflow step in flight, the loop blocked past the lease: the worker process is ended',
    SLOW,
    async () => {
      const receiver = await silentReceiver();
      const db = await setup(() => ({
        '_vance/recipes/hook.yaml': httpRecipe(receiver.url, {}, 'PT60S'),
        '_vance/workflows/flow.yaml': workflow('hook'),
        '_vance/scheduler/flow.yaml': everySecond('workflow: flow'),
      }));
      const worker = await startWorker(db, 'signal');
      await eventually(() => receiver.requests.length === 1, 'the step’s request in flight');
      worker.child.kill('SIGUSR2');
      expect(await worker.outcome, worker.log()).toBe('SIGKILL');
      await eventually(() => receiver.requests[0]?.closed === true, 'the request’s connection closed');
    },
  );

  it('a run registered but not entered yet is no request: the worker process lives on', SLOW, async () => {
    const db = await setup((file) => ({
      '_vance/recipes/step.yaml': shellRecipe(STEP, { marks: file }),
      '_vance/scheduler/job.yaml': everySecond('recipe: step'),
    }));
    const worker = await startWorker(db, 'pre-entry');
    await eventually(() => worker.out().includes('blocking\n'), 'the loop blocked before an entry');
    expect(await worker.outcome, worker.log()).toBe('unblocked');
    expect(worker.child.signalCode).toBe(null);
  });
});
