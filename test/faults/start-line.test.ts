import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const CHILD = resolve(import.meta.dirname, 'kill-child.mjs');
const T = 'acme';
const P = 'ops';
const DUE = Date.parse('2026-06-01T08:00:10Z');
const LEASE_MS = 5_000;
/** Schedulers due at DUE: one batch start, whose engines are entered together. */
const NAMES = ['a', 'b', 'c', 'd', 'e'];

let t: TestRuntime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/**
 * Five schedulers due at DUE, each running a shell command that appends `<pid> <correlationId>`
 * to a marks file: each line is one real entry of a run's engine (the engine's own record).
 */
async function setup(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  dir = mkdtempSync(join(tmpdir(), 'ursa-start-line-'));
  const marks = join(dir, 'marks');
  const files: Record<string, string> = {
    '_vance/recipes/mark.yaml': shellRecipe('echo "$$ $URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"', {
      out: marks,
    }),
  };
  for (const name of NAMES) files[`_vance/scheduler/${name}.yaml`] = cronScheduler('*/10 * * * * *', 'mark');
  const folder = projectFolder(files);
  await applyDirectory(t.rt, folder, T, P, libraryActor('alice'));
  rmSync(folder, { recursive: true, force: true });
  const entered = () =>
    existsSync(marks)
      ? readFileSync(marks, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split(' ')[1])
      : [];
  return { t, entered };
}

/** One worker pass at DUE in a child process that SIGKILLs itself right after the engines were entered. */
async function killedRightAfterEntering(location: string): Promise<void> {
  const kill = { entered: true };
  const child = spawn(process.execPath, [CHILD, JSON.stringify({ db: location, now: DUE, kill })], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  expect({ code, signal, stderr }, 'the child died right after entering the engines').toEqual({
    code: null,
    signal: 'SIGKILL',
    stderr: '',
  });
}

/** The restart once the dead worker's lease lapsed: a new worker, its bootstrap recovers. */
async function restart(t: TestRuntime, dialect: (typeof DIALECTS)[number]): Promise<Runtime> {
  // Past the dead worker's lease and the takeover margin.
  t.clock.set(DUE + LEASE_MS + TAKEOVER_MARGIN_MS + 1_000);
  const rt = await t.peer();
  const worker = t.worker({ acquireAheadMs: 0, leaseTtlMs: LEASE_MS, exclusive: dialect === 'sqlite' }, rt);
  await worker.bootstrap();
  await worker.executor.settled();
  await worker.stop();
  return rt;
}

/** Per run of the batch: its state, its feed lines in order, and its process row (or none). */
async function record(rt: Runtime) {
  const runs = await rt.repos.store.db.selectFrom('runs').selectAll().orderBy('name').execute();
  return Promise.all(
    runs.map(async (run) => {
      const lines = (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', run.name, 10)).reverse();
      const process =
        run.process_id === null ? undefined : await rt.repos.processes.get(run.process_id as string);
      return {
        name: run.name,
        correlationId: run.correlation_id,
        state: `${run.state} ${run.outcome} ${run.reason ?? ''}`.trim(),
        lines: lines.map((l) => `${l.kind} ${l.outcome}${l.payload.recovered === true ? ' recovered' : ''}`),
        process: process === undefined ? 'none' : `${process.status} ${process.reason ?? ''}`.trim(),
      };
    }),
  );
}

// issue #20, spec §7, §9a: a batch start enters its engines at the occurrence; a worker SIGKILLed
// right after leaves runs whose processes run on. Each such run has its START line and its process
// row — before, its START line and process came after the engines, and the kill left an END line
// (written by the recovery) with no START, and a process id pointing at no process.
// A child process and a restart each: more than the default 5 s on a busy machine.
describe.each(DIALECTS)(
  'a worker killed right after entering its engines, on %s (issue #20)',
  { timeout: 30_000 },
  (dialect) => {
    it('every run that entered its engine has its START line and its process row, and its END follows its START', async () => {
      const { t, entered } = await setup(dialect);
      await killedRightAfterEntering(t.location);
      // The engines' record: every run's command ran (it outlives the worker).
      await until(() => entered().length === NAMES.length, 'the commands the dead worker started');
      const killed = await record(t.rt);
      expect(new Set(entered())).toEqual(new Set(killed.map((r) => r.correlationId)));
      expect(killed.map(({ name, state, lines, process }) => ({ name, state, lines, process }))).toEqual(
        NAMES.map((name) => ({
          name,
          state: 'started pending',
          lines: ['START pending'],
          process: 'running',
        })),
      );

      const rt = await restart(t, dialect);
      const after = await record(rt);
      expect(after.map(({ name, state, lines, process }) => ({ name, state, lines, process }))).toEqual(
        NAMES.map((name) => ({
          name,
          state: 'ended failed worker-lost',
          lines: ['START pending', 'END failed'],
          process: 'failed worker-lost',
        })),
      );
      expect(entered()).toHaveLength(NAMES.length);
    });

    it('the recovery of a lost run writes the START line it is missing, before its END line', async () => {
      const { t, entered } = await setup(dialect);
      await killedRightAfterEntering(t.location);
      await until(() => entered().length === NAMES.length, 'the commands the dead worker started');
      // What a worker of an earlier version left: runs started, their START lines and process rows
      // never written.
      const db = t.rt.repos.store.db;
      await db.deleteFrom('feed').execute();
      await db.deleteFrom('processes').execute();

      const rt = await restart(t, dialect);
      const after = await record(rt);
      expect(after.map(({ name, state, lines }) => ({ name, state, lines }))).toEqual(
        NAMES.map((name) => ({
          name,
          state: 'ended failed worker-lost',
          lines: ['START pending recovered', 'END failed'],
        })),
      );
      const [line] = await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'a', 10).then((l) => l.reverse());
      expect(line?.at).toBe(DUE);
    });
  },
);
