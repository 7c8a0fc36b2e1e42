import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LEASE_LOST } from '../../src/fencing/lease.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// Issue #20 (decisions §5 fencing): no engine is entered once the worker lost its lease, a
// workflow step's no more than a scheduler run's. The gate is checked in the same turn as the
// step's entry, so a workflow run whose start was awaiting the store when the worker fenced itself
// (its stop found nothing to stop yet) starts no step either. What ran comes from the steps' marks.

const T = 'acme';
const P = 'ops';
const SLOW = { timeout: 30_000 };

let t: TestRuntime | undefined;
let dir = '';
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const marks = (): string[] => {
  const file = join(dir, 'marks');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};

async function setup(dialect: (typeof DIALECTS)[number]) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  dir = mkdtempSync(join(tmpdir(), 'ursa-step-gate-'));
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/mark.yaml': shellRecipe('echo "start $$" >> "$URSA_PARAM_MARKS"', {
        marks: join(dir, 'marks'),
      }),
      '_vance/workflows/flow.yaml': 'description: one step\nsteps:\n  - name: only\n    recipe: mark\n',
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const worker = t.worker();
  await worker.bootstrap();
  return { t, worker };
}

describe.each(DIALECTS)(
  'a workflow step is never entered without the lease, on %s (issue #20)',
  (dialect) => {
    it(
      'a workflow run whose start awaited the store across the fence enters no step: it ends lease-lost',
      SLOW,
      async () => {
        const { t, worker } = await setup(dialect);
        const starting = worker.executor.workflows.start(T, P, 'flow', {}, 'alice');
        // The self-fence, while the start awaits the store: the gate closes and every run is stopped.
        worker.executor.lease.fence();
        worker.executor.stopAll(LEASE_LOST);
        const { run, done } = await starting;
        expect(await done).toEqual({ status: 'cancelled', reason: 'step only: lease-lost' });
        expect(marks()).toEqual([]);
        const step = (await t.rt.repos.workflowRuns.get(T, run.id))?.steps[0];
        const process = await t.rt.repos.processes.get(step?.processId as string);
        expect([step?.status, step?.reason, process?.status, process?.reason]).toEqual([
          'cancelled',
          LEASE_LOST,
          'stopped',
          LEASE_LOST,
        ]);
      },
    );

    it('a step whose run was stopped while the step was being prepared is not entered', SLOW, async () => {
      const { t, worker } = await setup(dialect);
      const { run, done } = await worker.executor.workflows.start(T, P, 'flow', {}, 'alice');
      // The run's first step is being prepared (its recipe read, its process recorded) meanwhile.
      worker.executor.workflows.stopLocal(run.id, 'stopped');
      expect(await done).toEqual({ status: 'cancelled', reason: 'step only: stopped' });
      expect(marks()).toEqual([]);
      const step = (await t.rt.repos.workflowRuns.get(T, run.id))?.steps[0];
      const process = await t.rt.repos.processes.get(step?.processId as string);
      expect([step?.status, process?.status]).toEqual(['cancelled', 'stopped']);
    });
  },
);
