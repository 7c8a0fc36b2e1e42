import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/index.js';
import { systemClock } from '../../src/time/clock.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';
import { runtimeOn } from '../support/faults.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';

// Issue #20 (No orphans), decisions §5 fencing: a worker process SIGKILLed while its run's process
// lives, and no other worker started, on any host: its sentinel ends the run's process group
// within the fence grace, before another worker could take the run over (the lease and the
// takeover margin after the worker's last renewal), so that two runs of an `overlap: skip`
// scheduler never run side by side. Everything asserted about the run's process comes from the
// marks it writes.

const WORKER = resolve(import.meta.dirname, 'sentinel-worker.mjs');
/** The worker's lease (its default, 5 s): another worker takes its runs over after it and the margin. */
const LEASE_TTL_MS = 5000;
const T = 'acme';
const P = 'ops';
// Appends `start <pid> <ms>`, and `end <pid> <ms>` when it gets SIGTERM (which it then ignores).
// It writes nothing to the output pipes, which die with its worker: a write there would end it
// by SIGPIPE before its trap could run.
const SCRIPT = [
  'exec >/dev/null 2>&1',
  `trap 'trap "" TERM; echo "end $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"; exit 0' TERM`,
  'echo "start $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"',
  'while :; do sleep 0.05; done',
].join('\n');

let database: TestDatabase | undefined;
let store: Store | undefined;
let dir: string | undefined;
const workers = new Set<ChildProcess>();
// Every sentinel seen, by pid: killed after each test if one is left.
const sentinels = new Set<number>();

afterEach(async () => {
  for (const child of workers) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
  workers.clear();
  for (const pid of sentinels) if (running(pid)) kill(pid, 'SIGKILL');
  sentinels.clear();
  // Whatever a failing run left: the marks name every group.
  if (dir !== undefined) for (const mark of readMarks()) kill(-mark.pid, 'SIGKILL');
  await store?.close();
  await database?.drop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  store = database = dir = undefined;
});

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}

interface Mark {
  readonly kind: 'start' | 'end';
  readonly pid: number;
  readonly at: number;
}

function readMarks(): Mark[] {
  const file = join(dir as string, 'marks');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [kind, pid, at] = line.split(' ');
      return { kind: kind as Mark['kind'], pid: Number(pid), at: Number(at) };
    });
}

/** The fields of `/proc/<pid>/stat` after the command name: [state, ppid, …]; undefined when gone. */
function stat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(' ');
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs (a zombie has ended). */
function running(pid: number): boolean {
  const fields = stat(pid);
  return fields !== undefined && fields[0] !== 'Z' && fields[0] !== 'X';
}

/** The running sentinels whose parent is `parent`: children running `sentinel-main.js`. */
function sentinelsOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isSafeInteger(pid) || Number(stat(pid)?.[1]) !== parent || !running(pid)) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes('sentinel-main.js')) found.push(pid);
  }
  for (const pid of found) sentinels.add(pid);
  return found;
}

/** Polls `condition` every 10 ms for up to `ms`: a worker process starts in a second or two on a busy machine. */
async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what} never held`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A fresh store of `dialect` with one `overlap: skip` scheduler every second whose run is {@link SCRIPT}. */
async function setup(dialect: (typeof DIALECTS)[number]): Promise<string> {
  database = await freshDatabase(dialect);
  store = await openStore(database.location);
  dir = mkdtempSync(join(tmpdir(), 'ursa-sentinel-'));
  const project = projectFolder({
    '_vance/recipes/long.yaml': shellRecipe(SCRIPT),
    '_vance/scheduler/long.yaml': cronScheduler(
      '* * * * * *',
      'long',
      `overlap: skip\nparams:\n  marks: ${JSON.stringify(join(dir, 'marks'))}\n`,
    ),
  });
  try {
    await applyDirectory(runtimeOn(store, systemClock), project, T, P, libraryActor('alice'));
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
  return database.location;
}

interface StartedWorker {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Its log lines (JSON, warn and above) so far. */
  log(): { level: number; msg: string }[];
}

/** A worker process on `db`; resolves once it serves. */
async function startWorker(db: string): Promise<StartedWorker> {
  const child = spawn(process.execPath, [WORKER, JSON.stringify({ db })], {
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
  await until(() => out.includes('{"worker":') || child.exitCode !== null, 'the worker serving');
  expect(child.exitCode, err).toBe(null);
  const log = () =>
    err
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return { child, pid: child.pid as number, log };
}

/** The one run's process, once it started. */
async function firstRun(): Promise<Mark> {
  await until(() => readMarks().length > 0, 'the run started');
  return readMarks()[0] as Mark;
}

/**
 * SIGKILLs `worker` and waits for the end mark of `run`; checks it came before another worker could
 * have taken the run over (the lease and the takeover margin, counted from the kill: the worker
 * renewed its lease before it).
 */
async function killAndExpectEnd(worker: StartedWorker, run: Mark): Promise<void> {
  const killedAt = Date.now();
  worker.child.kill('SIGKILL');
  await once(worker.child, 'exit');
  await until(
    () => readMarks().some((m) => m.kind === 'end' && m.pid === run.pid),
    'the run ending',
    LEASE_TTL_MS + TAKEOVER_MARGIN_MS + 5000,
  );
  const end = readMarks().find((m) => m.kind === 'end' && m.pid === run.pid) as Mark;
  expect(end.at - killedAt, 'ended before another worker could take the run over').toBeLessThan(
    LEASE_TTL_MS + TAKEOVER_MARGIN_MS,
  );
  await until(() => !running(run.pid), 'the run gone', 5000);
}

describe.each(DIALECTS)(
  'a worker SIGKILLed with a live child, no other worker, on %s (issue #20)',
  (dialect) => {
    it('its sentinel ends the run’s process group within the grace, before a takeover could start another run, and exits', async () => {
      const worker = await startWorker(await setup(dialect));
      const run = await firstRun();
      const [sentinel] = sentinelsOf(worker.pid);
      await killAndExpectEnd(worker, run);
      expect(readMarks().map((m) => m.kind)).toEqual(['start', 'end']);
      expect(sentinel, 'the worker started a sentinel').toBeDefined();
      await until(() => !running(sentinel as number), 'the sentinel exiting', 5000);
    });

    it('a sentinel killed while its worker runs is replaced, told the running group, and still ends it', async () => {
      const worker = await startWorker(await setup(dialect));
      const run = await firstRun();
      const [first] = sentinelsOf(worker.pid);
      expect(first).toBeDefined();
      kill(first as number, 'SIGKILL');
      let second: number | undefined;
      await until(() => {
        second = sentinelsOf(worker.pid).find((pid) => pid !== first);
        return second !== undefined;
      }, 'a new sentinel');
      await until(() => worker.log().some((l) => l.msg.includes('sentinel ended')), 'the warning');
      expect(worker.log().filter((l) => l.msg.includes('sentinel ended'))).toEqual([
        expect.objectContaining({ level: 40, pid: first, signal: 'SIGKILL' }),
      ]);
      expect(running(run.pid), 'the run kept running').toBe(true);

      await killAndExpectEnd(worker, run);
      await until(() => !running(second as number), 'the new sentinel exiting', 5000);
    });

    it('a clean stop: the sentinel exits, the run ends once (its engine’s stop), nothing is logged', async () => {
      const worker = await startWorker(await setup(dialect));
      const run = await firstRun();
      const [sentinel] = sentinelsOf(worker.pid);
      expect(sentinel).toBeDefined();
      worker.child.kill('SIGTERM');
      const [code] = await once(worker.child, 'exit');
      expect({ code, log: worker.log() }).toEqual({ code: 0, log: [] });
      expect(running(sentinel as number), 'the sentinel is gone').toBe(false);
      expect(running(run.pid)).toBe(false);
      expect(readMarks().map((m) => `${m.kind} ${m.pid === run.pid ? 'run' : m.pid}`)).toEqual([
        'start run',
        'end run',
      ]);
    });
  },
);
