import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { runDetail } from '../../src/service/run-views.js';
import { stopProcess } from '../../src/service/runs.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

// Issue #23 item 3: a running run's page shows its output so far. The shell engine reports the
// tails of its output while the process runs; the run's view carries them until it ends, when the
// run log has them.

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.each(DIALECTS)('the output of a running run on %s (issue #23)', (dialect) => {
  it('is in the run view while the process runs, and in the run log once it ended', async () => {
    t = await testRuntime('2026-06-01T07:59:59Z', { dialect });
    await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/talk.yaml': shellRecipe("printf 'step 1\\n'; printf 'warned\\n' >&2; exec sleep 30"),
        '_vance/scheduler/job.yaml': cronScheduler('0 0 8 * * *', 'talk'),
      }),
      T,
      P,
      libraryActor('alice'),
    );
    const worker = t.worker({ acquireAheadMs: 0 });
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:00Z'));
    await worker.tick();
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 1);
    if (run === undefined) throw new Error('no run');
    const rt = t.rt;
    const detail = () => runDetail(rt, T, P, run.correlationId);
    await until(async () => (await detail())?.output?.output === 'step 1\n', 'the output so far is recorded');
    expect(await detail()).toMatchObject({
      state: 'running',
      output: { output: 'step 1\n', errorOutput: 'warned\n' },
    });

    const processId = (await detail())?.processId as string;
    await stopProcess(rt, T, processId, 'enough');
    await worker.reap();
    await worker.executor.settled();
    const ended = await detail();
    expect(ended).toMatchObject({ state: 'ended', outcome: 'cancelled', output: null });
    expect(ended?.log).toContain('step 1');
    await worker.stop();
  });
});
