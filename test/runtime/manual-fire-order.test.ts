import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import type { RunFaults } from '../../src/runtime/faults.js';
import { applyDirectory } from '../../src/service/apply.js';
import { fireScheduler } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
const DUE = Date.parse('2026-06-01T08:00:10Z');
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const RECIPE = 'description: held by the test\nengine: held\n';
const SCHEDULER =
  'description: order test\ncron: "*/10 * * * * *"\ntimezone: UTC\nrecipe: held\noverlap: skip\n';

async function setup(dialect: (typeof DIALECTS)[number], faults?: RunFaults) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const engine = controlledEngine();
  t.rt.engines.register(engine);
  const folder = projectFolder({
    '_vance/recipes/held.yaml': RECIPE,
    '_vance/scheduler/job.yaml': SCHEDULER,
  });
  await applyDirectory(t.rt, folder, T, P, libraryActor('alice'));
  rmSync(folder, { recursive: true, force: true });
  const worker = t.worker(faults === undefined ? {} : { faults });
  await worker.bootstrap();
  return { t, engine, worker };
}

async function runs(rt: Runtime) {
  const list = await rt.repos.runs.listForScheduler(T, P, 'job', 20);
  return list
    .map((r) => ({ id: r.correlationId, trigger: r.trigger, outcome: r.outcome, at: r.scheduledFor }))
    .sort((a, b) => a.at - b.at);
}

// issue #20: a manual fire recorded on the local store (`ursa fire` on the same SQLite file while
// a worker serves it, whose change notice never reaches the worker) before the instant of an
// occurrence the worker claimed ahead is judged before that occurrence, as one through REST is:
// it runs, and the occurrence is judged against it (here: skipped for overlap), never the other
// way round. The order comes from the lane, whichever path dispatches first.
describe.each(DIALECTS)(
  'a manual fire requested before a claimed occurrence, on %s (issue #20)',
  (dialect) => {
    for (const [path, faults] of [
      ['a batch start', undefined],
      // A fault point set sends every run through the one-at-a-time start.
      ['a start of its own', { beforeSpawn: () => {} }],
    ] as const) {
      it(`is judged before the occurrence (${path}), not skipped against a run that began after it was asked for`, async () => {
        const { t, engine, worker } = await setup(dialect, faults);
        t.clock.set(DUE - 300);
        await worker.heartbeat();
        expect(await worker.tick(500)).toMatchObject({ claimed: 1, fired: 1 });
        // `ursa fire` on the same store, from another process: the worker hears nothing of it.
        t.clock.set(DUE - 200);
        const local = await t.peer();
        const fired = await fireScheduler(local, T, P, 'job', libraryActor('alice'));

        const first = engine.started();
        t.clock.set(DUE);
        const entered = await first;
        // The worker's next pass, when it would have found the fire.
        await worker.reap();
        // One of the two is judged against the other.
        await until(
          async () => (await runs(t.rt)).some((r) => r.outcome.startsWith('skipped')),
          'a run skipped',
        );
        entered.finish();
        await worker.executor.settled();

        // The engine's own record: one process, the manual fire's.
        expect(engine.processes.map((p) => p.request.context.correlationId)).toEqual([fired.correlationId]);
        expect(await runs(t.rt)).toEqual([
          { id: fired.correlationId, trigger: 'manual', outcome: 'completed', at: DUE - 200 },
          { id: expect.any(String), trigger: 'cron', outcome: 'skipped_overlap', at: DUE },
        ]);
        const lines = (await t.rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 10))
          .reverse()
          .map((l) => `${l.kind} ${l.payload.trigger} ${l.outcome}`);
        expect(lines).toEqual([
          'START manual pending',
          'SKIPPED cron skipped_overlap',
          'END manual completed',
        ]);
      });
    }
  },
);
