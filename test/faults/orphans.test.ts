import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const CHILD = resolve(import.meta.dirname, 'orphan-child.mjs');
const T = 'acme';
const P = 'ops';
const FIRST = Date.parse('2026-06-01T08:00:10Z');
// The next occurrence, past the killed worker's lease (5 s): on PostgreSQL it is lost by then.
const NEXT = Date.parse('2026-06-01T08:00:20Z');

// A long run: marks its start, and its end when it gets SIGTERM; each mark is `<kind> <pid> <ms>`.
// It writes nothing to the output pipes, which die with its worker: a write there would end the
// orphan by SIGPIPE (as the shell's own "Terminated" notice would) before its trap could run.
const LONG_RUN = [
  'exec >/dev/null 2>&1',
  'trap \'echo "end $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"; exit 0\' TERM',
  'echo "start $$ $(date +%s%3N)" >> "$URSA_PARAM_MARKS"',
  'while :; do sleep 0.05; done',
].join('\n');

let t: TestRuntime | undefined;
const children = new Set<ChildProcess>();
const dirs: string[] = [];
let marksPath = '';

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  // Whatever a failing run left behind.
  for (const mark of marks()) {
    try {
      process.kill(-mark.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Mark {
  readonly kind: string;
  readonly pid: number;
  readonly ms: number;
}

function marks(): Mark[] {
  if (marksPath === '' || !existsSync(marksPath)) return [];
  return readFileSync(marksPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, pid, ms] = line.split(' ');
      return { kind: kind as string, pid: Number(pid), ms: Number(ms) };
    });
}

/** A worker process at `now` (fixed clock) on the test's store; its log lines go to `log`. */
function worker(now: number, exclusive: boolean, log: string[], dieBeforeInsertInto?: string): ChildProcess {
  const location = (t as TestRuntime).location;
  const options = { db: location, now, exclusive, dieBeforeInsertInto };
  const child = spawn(process.execPath, [CHILD, JSON.stringify(options)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.stderr?.on('data', (chunk: Buffer) => log.push(...chunk.toString().split('\n').filter(Boolean)));
  return child;
}

/** Polls `condition` every 10 ms for up to 30 s: a child worker starts in a second or two on a busy machine. */
async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`${what} never held`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether `pid` runs (a zombie has ended): the state field of `/proc/<pid>/stat`, after the command name. */
function running(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

// Issue #20 (No orphans), decisions §5 fencing: a worker SIGKILLed while its run's process lives
// leaves an orphan; the restarted worker ends it before it starts the next run of the same `skip`
// scheduler, so the two runs never overlap as processes, not only in the store.
/** The project: a `skip` scheduler every 10 s whose run is {@link LONG_RUN}. */
async function setup(dialect: (typeof DIALECTS)[number]): Promise<TestRuntime> {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const dir = mkdtempSync(join(tmpdir(), 'ursa-orphans-'));
  dirs.push(dir);
  marksPath = join(dir, 'marks');
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/long.yaml': shellRecipe(LONG_RUN, { marks: marksPath }),
      '_vance/scheduler/job.yaml':
        'description: a long run\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: long\noverlap: skip\n',
    }),
    T,
    P,
    libraryActor('alice'),
  );
  return t;
}

/**
 * The restart: a worker at the next occurrence on the same store; once the next run started it
 * is stopped (SIGTERM, a clean stop). Returns its log lines, then checks the marks: the orphan
 * ran its TERM trap before the next run started, and is not running.
 */
async function restartAndCheck(exclusive: boolean, orphanPid: number) {
  const log: string[] = [];
  const restarted = worker(NEXT, exclusive, log);
  await until(() => marks().some((m) => m.kind === 'start' && m.pid !== orphanPid), 'the next run started');
  restarted.kill('SIGTERM');
  const [code] = await once(restarted, 'exit');
  const lines = log.map((line) => JSON.parse(line));
  expect({ code, errors: lines.filter((l) => l.level >= 50) }).toEqual({ code: 0, errors: [] });

  const all = marks();
  const orphanEnd = all.find((m) => m.kind === 'end' && m.pid === orphanPid);
  const next = all.find((m) => m.kind === 'start' && m.pid !== orphanPid) as Mark;
  expect(orphanEnd, 'the orphan got SIGTERM and ran its trap').toBeDefined();
  expect((orphanEnd as Mark).ms).toBeLessThanOrEqual(next.ms);
  expect(all.map((m) => `${m.kind} ${m.pid === orphanPid ? 'orphan' : 'next'}`)).toEqual([
    'start orphan',
    'end orphan',
    'start next',
    'end next',
  ]);
  expect(running(orphanPid)).toBe(false);

  // The restart said what it stopped, and the store agrees.
  const warned = lines.filter((l) => l.msg.includes('stopped processes'));
  expect(warned).toEqual([expect.objectContaining({ level: 40, scheduler: 'job', pgid: orphanPid })]);
  const runs = await (t as TestRuntime).rt.repos.runs.listForScheduler(T, P, 'job', 10);
  expect(runs.map((r) => [iso(r.scheduledFor), r.outcome, r.reason]).reverse()).toEqual([
    ['2026-06-01T08:00:10Z', 'failed', 'worker-lost'],
    ['2026-06-01T08:00:20Z', 'cancelled', 'shutdown'],
  ]);
}

/** The recorded process groups, as [pgid, ending]. */
async function groups(): Promise<[number, string | null][]> {
  const rows = await (t as TestRuntime).rt.repos.store.db.selectFrom('process_groups').selectAll().execute();
  return rows.map((g) => [Number(g.pgid), g.ending]);
}

// Issue #20 (No orphans), decisions §5 fencing: a worker SIGKILLed while its run's process lives
// leaves an orphan; the restarted worker ends it before it starts the next run of the same `skip`
// scheduler, so the two runs never overlap as processes, not only in the store.
describe.each(DIALECTS)('SIGKILL with a live child, then a restart, on %s (issue #20)', (dialect) => {
  const exclusive = dialect === 'sqlite';

  it('the orphan ends (its TERM trap runs) before the next run of the skip scheduler starts', {
    timeout: 60_000,
  }, async () => {
    await setup(dialect);
    const first = worker(FIRST, exclusive, []);
    await until(() => marks().length === 1, 'the first run started');
    const orphanPid = (marks()[0] as Mark).pid;
    // Its process group is recorded (the moment before that is the next test's).
    await until(async () => (await groups()).length === 1, 'the group recorded');
    first.kill('SIGKILL');
    await once(first, 'exit');
    expect(running(orphanPid), 'the run outlived its worker').toBe(true);

    await restartAndCheck(exclusive, orphanPid);
    expect(await groups()).toEqual([[orphanPid, 'ended']]);
  });

  it('a worker killed between the spawn and the record of its group: the orphan is found by its process id', {
    timeout: 60_000,
  }, async () => {
    await setup(dialect);
    const first = worker(FIRST, exclusive, [], 'process_groups');
    await until(() => first.exitCode !== null || first.signalCode !== null, 'the worker died');
    expect(first.signalCode).toBe('SIGKILL');
    await until(() => marks().length === 1, 'the first run started');
    const orphanPid = (marks()[0] as Mark).pid;
    expect(running(orphanPid), 'the run outlived its worker').toBe(true);
    expect(await groups()).toEqual([]);

    await restartAndCheck(exclusive, orphanPid);
  });
});
