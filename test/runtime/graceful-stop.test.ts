import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedCrash } from '../../src/runtime/faults.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { Run } from '../../src/store/runs.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20: a clean shutdown leaves nothing running. A run whose dispatch was awaiting the store
// when the drain stopped everything, or that a start-up reap dispatched while the worker was
// being stopped, must not enter its engine afterwards: after stop() resolves no process of the
// worker is alive, and each run either never started (still claimed) or ended cancelled/shutdown.

const T = 'acme';
const P = 'ops';
const TTL = 5_000;
const DUE = Date.parse('2026-06-01T08:00:10Z');
const NAMES = ['job0', 'job1', 'job2', 'job3'];

let t: TestRuntime | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) {
    // A test that failed may leave process groups behind: end them before the store goes.
    for (const mark of marks()) killGroup(mark.pid);
    rmSync(dir, { recursive: true, force: true });
  }
  await t?.close();
  t = undefined;
  dir = undefined;
});

class Crash extends SimulatedCrash {}

/**
 * Each run appends `start <pid>` when it begins, `term <pid>` when SIGTERM reaches it, and
 * `exit <pid>` when it ran to its end (8 s; no run of these tests may get that far).
 */
const SCRIPT = [
  `trap 'echo "term $$ $URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"; exit 143' TERM`,
  `echo "start $$ $URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"`,
  'sleep 8 & wait $!',
  `echo "exit $$ $URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"`,
].join('\n');

async function setup(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect, settings: { shutdownGraceMs: 0 } });
  dir = mkdtempSync(join(tmpdir(), 'ursa-stop-'));
  const files: Record<string, string> = {
    '_vance/recipes/mark.yaml': shellRecipe(SCRIPT, { out: join(dir, 'marks') }),
  };
  for (const name of NAMES) files[`_vance/scheduler/${name}.yaml`] = cronScheduler('*/10 * * * * *', 'mark');
  await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
  return t;
}

interface Mark {
  readonly kind: 'start' | 'term' | 'exit';
  readonly pid: number;
  readonly correlationId: string;
}

function marks(): Mark[] {
  let text = '';
  try {
    text = readFileSync(join(dir as string, 'marks'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [kind, pid, correlationId] = line.split(' ');
      return { kind: kind as Mark['kind'], pid: Number(pid), correlationId: correlationId as string };
    });
}

/** The live (not zombie) processes of process group `pgid`, from /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces, so read after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
  }
  return members;
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone.
  }
}

/** What the engine-side marks and the processes say once stop() resolved: nothing of the worker is alive. */
function expectNothingAlive(): void {
  const all = marks();
  const started = all.filter((m) => m.kind === 'start');
  expect(
    all.filter((m) => m.kind === 'exit'),
    'no run ran to its end after the stop',
  ).toEqual([]);
  expect(
    started.filter((s) => !all.some((m) => m.kind === 'term' && m.pid === s.pid)),
    'every run that started was sent SIGTERM',
  ).toEqual([]);
  expect(started.flatMap((s) => groupMembers(s.pid))).toEqual([]);
}

/** Every run never started (still claimed, for the next worker) or ended cancelled, reason shutdown. */
async function expectClaimedOrShutdown(): Promise<Run[]> {
  const runs: Run[] = [];
  for (const name of NAMES)
    runs.push(...(await (t as TestRuntime).rt.repos.runs.listForScheduler(T, P, name, 5)));
  expect(runs).toHaveLength(NAMES.length);
  for (const run of runs) {
    const seen = run.state === 'claimed' ? ['claimed'] : [run.state, run.outcome, run.reason];
    expect([['claimed'], ['ended', 'cancelled', 'shutdown']]).toContainEqual(seen);
  }
  return runs;
}

/** Resolves when the drain of `worker` has stopped its running processes (its final stop). */
function finalStopOf(worker: Worker): Promise<void> {
  const workflows = worker.executor.workflows;
  const stopAll = workflows.stopAll.bind(workflows);
  return new Promise((resolve) => {
    workflows.stopAll = (reason) => {
      resolve();
      return stopAll(reason);
    };
  });
}

describe.each(DIALECTS)('a graceful stop on %s leaves nothing running (issue #20)', (dialect) => {
  it('stopped in the middle of its start-up reap, it starts none of the lost runs it resumes after the drain', async () => {
    const t = await setup(dialect);
    // A dead worker's claims: it crashed right after claiming the four occurrences.
    const dead = t.worker({
      leaseTtlMs: TTL,
      faults: { afterClaim: () => Promise.reject(new Crash('killed')) },
    });
    await dead.bootstrap();
    t.clock.set(DUE);
    await dead.heartbeat();
    await expect(dead.tick()).rejects.toBeInstanceOf(Crash);
    t.clock.advance(TTL + 1);

    const worker = t.worker({ leaseTtlMs: TTL });
    const finalStop = finalStopOf(worker);
    // The start of every resumed run waits in the store until the drain's final stop.
    const lanes = t.rt.repos.lanes;
    const admit = lanes.admit.bind(lanes);
    const startMany = lanes.startMany.bind(lanes);
    lanes.admit = async (...args) => {
      await finalStop;
      return admit(...args);
    };
    lanes.startMany = async (...args) => {
      await finalStop;
      return startMany(...args);
    };
    // The worker is stopped while its start-up reap is under way.
    const waitingWithoutActive = lanes.waitingWithoutActive.bind(lanes);
    let stopped: Promise<void> | undefined;
    lanes.waitingWithoutActive = async (...args) => {
      stopped ??= worker.stop();
      return waitingWithoutActive(...args);
    };

    const started = worker.start();
    await until(() => stopped !== undefined, 'the stop during the start-up');
    await stopped;
    await started;
    expectNothingAlive();
    await expectClaimedOrShutdown();
    expect(worker.executor.active).toBe(0);
  }, 30_000);

  it('stopped while dispatches await the store, it starts none of them and stops the running ones', async () => {
    const t = await setup(dialect);
    let finalStop: Promise<void> = new Promise(() => {});
    // job2 and job3 are held at their dispatch (a fault point) until the drain's final stop.
    const worker = t.worker({
      leaseTtlMs: TTL,
      faults: { beforeSpawn: (run) => (run.name >= 'job2' ? finalStop : undefined) },
    });
    finalStop = finalStopOf(worker);
    await worker.bootstrap();
    t.clock.set(DUE);
    await worker.heartbeat();
    expect(await worker.tick()).toMatchObject({ claimed: 4 });
    await until(() => marks().filter((m) => m.kind === 'start').length === 2, 'job0 and job1 running');

    await worker.stop();
    expectNothingAlive();
    expect(marks().filter((m) => m.kind === 'term')).toHaveLength(2);
    const runs = await expectClaimedOrShutdown();
    const byName = Object.fromEntries(runs.map((r) => [r.name, r]));
    expect([byName.job0?.outcome, byName.job1?.outcome]).toEqual(['cancelled', 'cancelled']);
    expect([byName.job2?.state, byName.job3?.state]).toEqual(['claimed', 'claimed']);

    // The next worker resumes what never started (the stopped worker holds no lease).
    const next = t.worker({ leaseTtlMs: TTL });
    await next.bootstrap();
    await until(async () => {
      const held = await t.rt.repos.runs.heldBy(next.id, ['started'], 10);
      return held.length === 2;
    }, 'the next worker started job2 and job3');
    await until(() => marks().filter((m) => m.kind === 'start').length === 4, 'job2 and job3 running');
    await next.stop();
    expectNothingAlive();
  }, 30_000);
});
