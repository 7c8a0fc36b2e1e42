import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { repositories } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { storeFailure, writeHooks } from '../support/select-faults.js';

// Issue #20: a scheduler run's lane is never free while its work runs. A workflow run started for
// it whose start cannot be recorded (the store fails) is ended — its running step stopped — before
// the scheduler run is ended, so the next run of the scheduler never runs beside it.

const T = 'acme';
const P = 'ops';
// `start <pid>`, then `term <pid>` on SIGTERM or `exit <pid>` after 5 s.
const STEP = [
  `trap 'echo "term $$" >> "$URSA_PARAM_OUT"; exit 143' TERM`,
  'echo "start $$" >> "$URSA_PARAM_OUT"',
  'sleep 5 & wait $!',
  'echo "exit $$" >> "$URSA_PARAM_OUT"',
].join('\n');

let t: TestRuntime | undefined;
let dir: string | undefined;
afterEach(async () => {
  for (const pid of startedPids()) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  await t?.close();
  t = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function marks(): string[][] {
  const file = join(dir as string, 'marks');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' '))
    : [];
}

function startedPids(): number[] {
  return dir === undefined ? [] : marks().flatMap(([kind, pid]) => (kind === 'start' ? [Number(pid)] : []));
}

describe.each(DIALECTS)('a workflow run whose start cannot be recorded (on %s; issue #20)', (dialect) => {
  it('is ended, its running step stopped, before its scheduler run is ended', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    dir = mkdtempSync(join(tmpdir(), 'ursa-wfstart-'));
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/step.yaml': shellRecipe(STEP, { out: join(dir, 'marks') }),
        '_vance/workflows/flow.yaml': 'description: one step\nsteps:\n  - name: step\n    recipe: step\n',
        '_vance/scheduler/flow.yaml': cronScheduler('0 * * * * *', 'step').replace(
          'recipe: step',
          'workflow: flow',
        ),
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const hooks = writeHooks(t.store);
    const rt: Runtime = { ...t.rt, repos: repositories(hooks.store) };
    const worker = t.worker({ acquireAheadMs: 0 }, rt);
    await worker.bootstrap();
    // The scheduler run's START line is the first feed line its start writes: the store fails it
    // once the step may already run (the workflow run was started first).
    hooks.onNextWrite('feed', 'insert', () => {
      throw storeFailure(dialect);
    });
    t.clock.set(Date.parse('2026-06-01T08:01:00Z'));
    await worker.tick();
    await worker.executor.settled();
    const [run] = await rt.repos.runs.listForScheduler(T, P, 'flow', 10);
    expect(run).toMatchObject({ state: 'ended', outcome: 'failed', reason: 'spawn-failed' });
    // When the run was ended, its workflow run had ended too, and no step of it was left running.
    const workflowRuns = await rt.repos.store.db
      .selectFrom('workflow_runs')
      .select('status')
      .where('correlation_id', '=', (run as { correlationId: string }).correlationId)
      .execute();
    expect(workflowRuns).toEqual([{ status: 'cancelled' }]);
    const seen = marks();
    for (const pid of startedPids())
      expect(
        seen.some(([kind, p]) => kind !== 'start' && Number(p) === pid),
        `step ${pid} ended`,
      ).toBe(true);
  });
});
