import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkflowRunner } from '../../src/runtime/workflow-runner.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5): a reap ends the processes no live worker runs. A workflow step's
// process has no scheduler run of its own: it belongs to its workflow run, and is orphaned only
// when that run's worker is lost or the run has ended, never while a live worker runs the step.

const T = 'acme';
const P = 'ops';
const SLOW = { timeout: 30_000 };
// Marks `start <pid>`, waits for the file `go`, marks `end <pid>` and exits 0.
const STEP = [
  'echo "start $$" >> "$URSA_PARAM_MARKS"',
  'while [ ! -e "$URSA_PARAM_GO" ]; do sleep 0.02; done',
  'echo "end $$" >> "$URSA_PARAM_MARKS"',
].join('\n');

let t: TestRuntime | undefined;
let dir = '';
afterEach(async () => {
  // Lets a step a failing test left waiting end.
  if (dir !== '') writeFileSync(join(dir, 'go'), '');
  await t?.close();
  t = undefined;
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const marks = (): string[] => {
  const file = join(dir, 'marks');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};

async function setup(dialect: (typeof DIALECTS)[number]): Promise<TestRuntime> {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  dir = mkdtempSync(join(tmpdir(), 'ursa-step-reap-'));
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/wait.yaml': shellRecipe(STEP, { marks: join(dir, 'marks'), go: join(dir, 'go') }),
      '_vance/workflows/flow.yaml':
        'description: one waiting step\nsteps:\n  - name: only\n    recipe: wait\n',
    }),
    T,
    P,
    libraryActor('alice'),
  );
  return t;
}

describe.each(DIALECTS)('a running workflow step is no orphan, on %s (issue #20)', (dialect) => {
  it('its process runs across several reaps of its own worker and another, and ends done', SLOW, async () => {
    const t = await setup(dialect);
    const worker = t.worker();
    await worker.bootstrap();
    const other = t.worker({}, await t.peer());
    await other.bootstrap();
    const { run, done } = await worker.executor.workflows.start(T, P, 'flow', {}, 'alice');
    await until(() => marks().length === 1, 'the step started');
    for (let second = 1; second <= 3; second++) {
      t.clock.set(Date.parse('2026-06-01T08:00:00Z') + second * 1000);
      await worker.reap();
      await other.reap();
    }
    writeFileSync(join(dir, 'go'), '');
    expect(await done).toEqual({ status: 'completed', reason: null });
    expect(marks().map((m) => m.split(' ')[0])).toEqual(['start', 'end']);
    const step = (await t.rt.repos.workflowRuns.get(T, run.id))?.steps[0];
    const process = await t.rt.repos.processes.get(step?.processId as string);
    expect([step?.status, process?.status, process?.reason, process?.exitCode]).toEqual([
      'completed',
      'done',
      null,
      0,
    ]);
  });

  it(
    'its process is orphaned once its workflow run’s worker is lost or the run ended, and not for a run no worker holds',
    SLOW,
    async () => {
      const t = await setup(dialect);
      const worker = t.worker();
      await worker.bootstrap();
      const live = worker.executor.workflows;
      const lost = new WorkflowRunner(t.rt, 'wrk_lost');
      const command = new WorkflowRunner(t.rt);
      const started = [
        await live.start(T, P, 'flow', {}, 'alice'),
        await lost.start(T, P, 'flow', {}, 'alice'),
        await command.start(T, P, 'flow', {}, 'alice'),
      ];
      await until(() => marks().length === 3, 'the steps started');
      const processOf = async (id: string) =>
        (await t.rt.repos.workflowRuns.get(T, id))?.steps[0]?.processId as string;
      const [ofLive, ofLost, ofCommand] = await Promise.all(started.map(({ run }) => processOf(run.id)));
      const { processes } = t.rt.repos;
      expect(await processes.orphaned({ kind: 'only', workerId: worker.id }, 100)).toEqual([ofLost]);
      // The live worker's workflow run ended (its step's end not recorded yet): no one runs the step.
      await t.rt.repos.workflowRuns.end(started[0]?.run.id as string, 'failed', 'test', t.clock.now());
      expect((await processes.orphaned({ kind: 'only', workerId: worker.id }, 100)).sort()).toEqual(
        [ofLive, ofLost].sort(),
      );
      expect(ofCommand).toBeDefined();
      writeFileSync(join(dir, 'go'), '');
      await Promise.all(started.map(({ done }) => done));
    },
  );
});
