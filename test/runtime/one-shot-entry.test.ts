import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import type { Runtime } from '../../src/runtime/context.js';
import { SimulatedCrash } from '../../src/runtime/faults.js';
import { refreshProject } from '../../src/runtime/registrar.js';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { repositories } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { storeFailure, writeHooks } from '../support/select-faults.js';

// Issue #20, spec §10a: a one-shot is used up by its start — the fired marker and the trash follow
// the engine's entry ("spawn, then the marker"). An attempt that never entered its engine because
// its worker lost its lease does not use it up; once the engine was entered, only the engine's
// return ends the run, whatever the store does to the bookkeeping after it.

const T = 'acme';
const P = 'ops';
const AT = '2026-06-01T08:30:00Z';
const PATH = '_vance/scheduler/once.yaml';

let t: TestRuntime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A one-shot at {@link AT} whose process appends its correlation id to `marks` when it runs. */
async function setup(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  dir = mkdtempSync(join(tmpdir(), 'ursa-entry-'));
  const marks = join(dir, 'marks');
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/mark.yaml': shellRecipe('echo "$URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"', {
        out: marks,
      }),
      [PATH]: `description: once\nat: "${AT}"\ntimezone: UTC\nrecipe: mark\n`,
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const hooks = writeHooks(t.store);
  const rt: Runtime = { ...t.rt, repos: repositories(hooks.store) };
  const worker = t.worker({ acquireAheadMs: 0 }, rt);
  await worker.bootstrap();
  const executions = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean) : []);
  return { t, rt, worker, hooks, executions };
}

async function tick(t: TestRuntime, worker: Worker, instant: string) {
  t.clock.set(Date.parse(instant));
  await worker.tick();
  await worker.executor.settled();
}

/** What the store says of the one-shot: its feed, runs, marker and document. */
async function standing(rt: Runtime) {
  const feed = (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'once', 100)).reverse();
  return {
    lines: feed.map((l) => [l.kind, l.outcome, l.payload.reason ?? null]),
    runs: (await rt.repos.runs.listForScheduler(T, P, 'once', 10)).map((r) => [r.outcome, r.reason]),
    fired: await rt.repos.projects.hasFired(T, P, 'once', Date.parse(AT)),
    document: (await rt.repos.documents.get({ tenant: T, project: P, path: PATH })) !== undefined,
    feedTraces: feed.map((l) => l.traceId),
    logPaths: feed.map((l) => l.logPath),
  };
}

describe.each(DIALECTS)(
  'a one-shot is used up by its start, not before (on %s; issue #20, spec §10a)',
  (dialect) => {
    it('an attempt whose worker lost its lease before the engine was entered leaves it unused; it runs once the lease holds again', async () => {
      const { t, rt, worker, hooks, executions } = await setup(dialect);
      // The lease is lost between the run's start (its process row inserted) and its engine's entry.
      hooks.onNextWrite('processes', 'update', () => worker.executor.lease.fence());
      await tick(t, worker, AT);
      expect(executions(), 'no process started').toEqual([]);
      const released = await standing(rt);
      expect(released).toMatchObject({
        lines: [
          ['START', 'pending', null],
          ['END', 'cancelled', 'lease-lost'],
        ],
        runs: [],
        fired: false,
        document: true,
      });
      const processes = await rt.repos.store.db
        .selectFrom('processes')
        .select(['status', 'reason'])
        .execute();
      expect(processes).toEqual([{ status: 'stopped', reason: 'lease-lost' }]);

      // The first pass once the lease holds again runs it, once.
      worker.executor.lease.holdUntil(process.hrtime.bigint() + 3_600_000_000_000n);
      await tick(t, worker, '2026-06-01T08:30:02Z');
      const after = await standing(rt);
      expect(after).toMatchObject({
        lines: [
          ['START', 'pending', null],
          ['END', 'cancelled', 'lease-lost'],
          ['START', 'pending', null],
          ['END', 'completed', null],
        ],
        runs: [['completed', null]],
        fired: true,
        document: false,
      });
      const second = after.feedTraces[2] as string;
      expect(after.feedTraces[0]).not.toBe(second);
      expect(executions()).toEqual([second]);
      // The released run is deleted; its token is never given out again (each attempt's is larger).
      const tokens = await Promise.all(
        after.logPaths.slice(0, 3).map(async (path) => {
          const log = await rt.repos.documents.get({ tenant: T, project: P, path: path as string });
          return Number(/^fencingToken: (\d+)$/m.exec(log?.body ?? '')?.[1]);
        }),
      );
      expect((tokens[2] as number) > (tokens[0] as number), `tokens ${tokens.join(', ')}`).toBe(true);
      // A refresh finds it used up: it is not planned again.
      await refreshProject(rt, T, P);
      await tick(t, worker, '2026-06-01T08:31:00Z');
      expect(executions()).toEqual([second]);
    });

    it('a store error moving its process to running, before the engine was entered, leaves it unused; the next pass runs it', async () => {
      const { t, rt, worker, hooks, executions } = await setup(dialect);
      hooks.onNextWrite('processes', 'update', () => {
        throw storeFailure(dialect);
      });
      await tick(t, worker, AT);
      expect(executions()).toEqual([]);
      expect(await standing(rt)).toMatchObject({
        lines: [
          ['START', 'pending', null],
          ['END', 'cancelled', 'spawn-failed'],
        ],
        runs: [],
        fired: false,
        document: true,
      });
      await tick(t, worker, '2026-06-01T08:30:01Z');
      const after = await standing(rt);
      expect(after).toMatchObject({ runs: [['completed', null]], fired: true, document: false });
      expect(executions()).toEqual([after.feedTraces[2]]);
    });

    it('a worker that died between its start and its entry: a refresh leaves it in place, the reap that finds the worker lost releases it, and it runs once', async () => {
      const { t, rt, worker, hooks, executions } = await setup(dialect);
      hooks.onNextWrite('processes', 'update', () => {
        throw new SimulatedCrash('killed before the entry');
      });
      await tick(t, worker, AT);
      expect(executions()).toEqual([]);
      // Started, its process still `ready`: a refresh does not take it for fired.
      await refreshProject(rt, T, P);
      expect(await standing(rt)).toMatchObject({ runs: [['pending', null]], fired: false, document: true });

      // Another worker, once the dead one's lease and the margin lapsed.
      t.clock.set(Date.parse(AT) + 5_000 + TAKEOVER_MARGIN_MS + 1_000);
      const other = t.worker({ acquireAheadMs: 0 }, await t.peer());
      await other.bootstrap();
      await other.reap();
      await other.tick();
      await other.executor.settled();
      const after = await standing(rt);
      expect(after).toMatchObject({
        lines: [
          ['START', 'pending', null],
          ['END', 'cancelled', 'worker-lost'],
          ['START', 'pending', null],
          ['END', 'completed', null],
        ],
        runs: [['completed', null]],
        fired: true,
        document: false,
      });
      expect(executions()).toEqual([after.feedTraces[2]]);
      await other.stop();
    });

    it('a store error marking it fired after its engine was entered neither ends the run nor runs it again; the next refresh marks it', async () => {
      const { t, rt, worker, hooks, executions } = await setup(dialect);
      hooks.onNextWrite('oneshot_fires', 'insert', () => {
        throw storeFailure(dialect);
      });
      await tick(t, worker, AT);
      const ran = await standing(rt);
      // Ended by its engine (completed), not as a failed spawn; its document waits for the refresh.
      expect(ran).toMatchObject({
        lines: [
          ['START', 'pending', null],
          ['END', 'completed', null],
        ],
        runs: [['completed', null]],
        fired: false,
        document: true,
      });
      expect(executions()).toEqual([ran.feedTraces[0]]);
      await refreshProject(rt, T, P);
      expect(await standing(rt)).toMatchObject({ fired: true, document: false });
      await tick(t, worker, '2026-06-01T08:31:00Z');
      expect(executions()).toHaveLength(1);
    });
  },
);
