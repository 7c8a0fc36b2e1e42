import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultEngines } from '../../src/engines/index.js';
import type { Runtime } from '../../src/runtime/context.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { refreshProject } from '../../src/runtime/registrar.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const P = 'ops';
const AT = '2026-06-01T08:30:00Z';
let t: TestRuntime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** What a refused one-shot leaves, and what it must not (spec §10a). */
async function standing(rt: Runtime, metrics: Metrics[]) {
  const feed = (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'once', 100)).reverse();
  const inbox = await rt.repos.inbox.list(T, 'alice', { limit: 100 });
  let refusedMetric = 0;
  for (const m of metrics) {
    const values = (await m.runs.get()).values;
    refusedMetric += values.find((v) => v.labels.outcome === 'refused')?.value ?? 0;
  }
  return {
    lines: feed.map((l) => [l.kind, l.outcome, l.payload.reason]),
    inbox: inbox.map((i) => [i.kind, i.title]),
    refusedMetric,
    fired: await rt.repos.projects.hasFired(T, P, 'once', Date.parse(AT)),
    document:
      (await rt.repos.documents.get({ tenant: T, project: P, path: '_vance/scheduler/once.yaml' })) !==
      undefined,
    trash: (await rt.repos.documents.list(T, P, '_vance/trash/')).length,
    runs: (await rt.repos.runs.listForScheduler(T, P, 'once', 10)).map((r) => [
      iso(r.scheduledFor),
      r.outcome,
    ]),
  };
}

async function tickAt(t: TestRuntime, worker: ReturnType<TestRuntime['worker']>, instant: string) {
  t.clock.set(Date.parse(instant));
  const result = await worker.tick();
  await worker.executor.settled();
  return result;
}

// Spec §10a, issue #20: a one-shot whose start is refused is not consumed — no marker, no trash —
// and is tried again when its project is refreshed or a worker starts, never in a loop; each
// refusal is recorded once in the feed, the inbox and the metrics.
// Several workers, refreshes and child processes per test: more than the default 5 s on a busy machine.
describe.each(DIALECTS)(
  'a one-shot whose start is refused, on %s (spec §10a)',
  { timeout: 30_000 },
  (dialect) => {
    it('a workflow target while workflows are off: kept, tried again on a refresh and at a start, and runs once they are on', async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect, settings: { workflowsEnabled: false } });
      dir = mkdtempSync(join(tmpdir(), 'ursa-refused-'));
      const marks = join(dir, 'marks');
      await applyDirectory(
        t.rt,
        projectFolder({
          '_vance/recipes/mark.yaml': shellRecipe(`echo "$URSA_PROCESS_ID" >> ${marks}`),
          '_vance/workflows/w.yaml': 'description: one step\nsteps:\n  - name: only\n    recipe: mark\n',
          '_vance/scheduler/once.yaml': `description: once\nat: "${AT}"\nworkflow: w\n`,
        }),
        T,
        P,
        libraryActor('alice'),
      );
      const first = new Metrics();
      const worker = t.worker({}, { ...t.rt, metrics: first });
      await worker.bootstrap();
      expect(await tickAt(t, worker, AT)).toMatchObject({ claimed: 1 });
      const reason = 'workflows are switched off by the operator (workflows: false)';
      const once = {
        lines: [['SKIPPED', 'refused', reason]],
        inbox: [['one-shot-refused', `once did not start: ${reason}`]],
        refusedMetric: 1,
        fired: false,
        document: true,
        trash: 0,
        runs: [],
      };
      expect(await standing(t.rt, [first])).toEqual(once);
      // Never in a loop: later ticks find nothing due.
      expect(await tickAt(t, worker, '2026-06-01T08:31:00Z')).toMatchObject({ due: 0 });
      expect(await tickAt(t, worker, '2026-06-01T09:30:00Z')).toMatchObject({ due: 0 });
      expect(await standing(t.rt, [first])).toEqual(once);

      // A refresh of its project tries it again: refused again, recorded once more.
      await refreshProject(t.rt, T, P);
      expect(await tickAt(t, worker, '2026-06-01T09:31:00Z')).toMatchObject({ claimed: 1 });
      const twice = await standing(t.rt, [first]);
      expect([
        twice.lines.length,
        twice.inbox.length,
        twice.refusedMetric,
        twice.fired,
        twice.document,
      ]).toEqual([2, 2, 2, false, true]);
      await worker.stop();

      // Workflows switched on, a worker starts: it runs, once, and is consumed.
      const peer = await t.peer();
      const on: Runtime = {
        ...peer,
        settings: { ...peer.settings, workflowsEnabled: true },
        metrics: new Metrics(),
      };
      const restarted = t.worker({ exclusive: true }, on);
      await restarted.bootstrap();
      // The tick's dispatch holds the lane until the workflow run ends: settled, it has ended.
      expect(await tickAt(t, restarted, '2026-06-01T10:00:00Z')).toMatchObject({ claimed: 1, fired: 1 });
      expect(await tickAt(t, restarted, '2026-06-01T10:01:00Z')).toMatchObject({ due: 0 });
      const after = await standing(t.rt, [first]);
      expect([after.fired, after.document, after.trash, after.runs]).toEqual([
        true,
        false,
        1,
        [['2026-06-01T08:30:00Z', expect.any(String)]],
      ]);
      await restarted.stop();
      expect(readFileSync(marks, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    });

    it('an engine that is not registered: kept, and run by a worker that starts with the engine', async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      dir = mkdtempSync(join(tmpdir(), 'ursa-refused-'));
      const marks = join(dir, 'marks');
      await applyDirectory(
        t.rt,
        projectFolder({
          '_vance/recipes/custom.yaml': 'description: a library engine\nengine: custom\n',
          '_vance/scheduler/once.yaml': `description: once\nat: "${AT}"\nrecipe: custom\n`,
        }),
        T,
        P,
        libraryActor('alice'),
      );
      const first = new Metrics();
      const worker = t.worker({}, { ...t.rt, metrics: first });
      await worker.bootstrap();
      await tickAt(t, worker, AT);
      const reason = 'engine "custom" is not registered';
      expect(await standing(t.rt, [first])).toEqual({
        lines: [['SKIPPED', 'refused', reason]],
        inbox: [['one-shot-refused', `once did not start: ${reason}`]],
        refusedMetric: 1,
        fired: false,
        document: true,
        trash: 0,
        runs: [],
      });
      expect(await t.store.db.selectFrom('processes').select('id').execute()).toEqual([]);
      expect(await tickAt(t, worker, '2026-06-01T09:00:00Z')).toMatchObject({ due: 0 });
      await worker.stop();

      // A worker that has the engine starts: it runs the one-shot once, and it is consumed.
      const peer = await t.peer();
      const engines = defaultEngines().register({
        name: 'custom',
        run: async (request) => {
          appendFileSync(marks, `${request.processId} ${request.context.scheduledFor}\n`);
          return { status: 'done' };
        },
      });
      const restarted = t.worker({ exclusive: true }, { ...peer, engines });
      await restarted.bootstrap();
      await tickAt(t, restarted, '2026-06-01T09:10:00Z');
      await tickAt(t, restarted, '2026-06-01T09:20:00Z');
      await restarted.stop();
      expect(readFileSync(marks, 'utf8').split('\n').filter(Boolean)).toEqual([
        expect.stringMatching(new RegExp(` ${Date.parse(AT)}$`)),
      ]);
      const after = await standing(t.rt, [first]);
      expect([after.fired, after.document, after.trash, after.lines.map((l) => l[0])]).toEqual([
        true,
        false,
        1,
        ['SKIPPED', 'START', 'END'],
      ]);
    });

    it('a workflow that refuses to start (a parameter it does not declare): kept, and runs after a refresh once the workflow takes it', async () => {
      t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
      dir = mkdtempSync(join(tmpdir(), 'ursa-refused-'));
      const marks = join(dir, 'marks');
      const steps = 'steps:\n  - name: only\n    recipe: mark\n';
      await applyDirectory(
        t.rt,
        projectFolder({
          '_vance/recipes/mark.yaml': shellRecipe(`echo "$URSA_PROCESS_ID" >> ${marks}`),
          '_vance/workflows/w.yaml': `description: one step\n${steps}`,
          '_vance/scheduler/once.yaml': `description: once\nat: "${AT}"\nworkflow: w\nparams:\n  who: me\n`,
        }),
        T,
        P,
        libraryActor('alice'),
      );
      const worker = t.worker();
      await worker.bootstrap();
      await tickAt(t, worker, AT);
      const refused = await standing(t.rt, []);
      expect([refused.lines, refused.inbox, refused.fired, refused.document, refused.runs]).toEqual([
        [['SKIPPED', 'refused', expect.stringMatching(/^workflow w cannot start: params\.who: /)]],
        [['one-shot-refused', expect.stringMatching(/^once did not start: workflow w cannot start/)]],
        false,
        true,
        [],
      ]);
      expect(await tickAt(t, worker, '2026-06-01T09:00:00Z')).toMatchObject({ due: 0 });
      await t.rt.repos.documents.put(
        { tenant: T, project: P, path: '_vance/workflows/w.yaml' },
        `description: one step\nparameters:\n  who: ~\n${steps}`,
        libraryActor('alice'),
        0,
      );
      await refreshProject(t.rt, T, P);
      await tickAt(t, worker, '2026-06-01T09:01:00Z');
      const after = await standing(t.rt, []);
      expect([after.fired, after.document, after.lines.map((l) => l[0])]).toEqual([
        true,
        false,
        ['SKIPPED', 'START', 'END'],
      ]);
      expect(readFileSync(marks, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    });
  },
);
