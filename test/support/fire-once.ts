import { expect } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { Run } from '../../src/store/runs.js';
import { cronScheduler, projectFolder } from './project.js';
import type { TestRuntime } from './runtime.js';

/**
 * Applies `recipe` as `_vance/recipes/<recipeName>.yaml` and a scheduler `scheduler` firing it
 * every 10 s (with `extra` scheduler lines, e.g. `params:`) to project `acme/ops` as `user`, then
 * fires it once through a real worker tick 10 s on, on the stepped clock of `t`, waits for the
 * process to end and returns the run.
 */
export async function applyAndFireOnce(
  t: TestRuntime,
  options: {
    readonly recipeName: string;
    readonly recipe: string;
    readonly scheduler: string;
    readonly extra?: string;
    readonly user: string;
  },
): Promise<Run> {
  const { recipeName, recipe, scheduler, extra, user } = options;
  const entries = await applyDirectory(
    t.rt,
    projectFolder({
      [`_vance/recipes/${recipeName}.yaml`]: recipe,
      [`_vance/scheduler/${scheduler}.yaml`]: cronScheduler('*/10 * * * * *', recipeName, extra),
    }),
    'acme',
    'ops',
    libraryActor(user),
  );
  expect(entries.map((e) => e.status)).toEqual(['created', 'created']);
  const worker = t.worker();
  await worker.bootstrap();
  t.clock.set(t.clock.now() + 10_000);
  expect(await worker.tick()).toMatchObject({ fired: 1 });
  await worker.executor.settled();
  const [run] = await t.rt.repos.runs.listForScheduler('acme', 'ops', scheduler, 10);
  if (run === undefined) throw new Error(`the scheduler ${scheduler} did not run`);
  return run;
}
