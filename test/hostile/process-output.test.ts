import { Parser } from 'commonmark';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkflowRunner } from '../../src/runtime/workflow-runner.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// What a process prints is not Ursa's to choose (issue #19): a NUL in it could not be stored on
// PostgreSQL, so the run was never recorded; a line of four backticks closed the run log's Output
// block and forged a heading. Through a real run on both stores: the run is recorded, the NUL
// shows as U+FFFD (as CommonMark shows it), and the log's headings are Ursa's alone.

const T = 'acme';
const P = 'ops';
// NUL, ESC, a fence longer than the log's old one with a heading after it, and HTML.
const PRINTS = "printf 'a\\000b\\033[2J\\n````\\n## Forged\\n<script>x</script>\\n'; printf 'e\\000\\n' >&2";

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.each(DIALECTS)('process output on %s (issue #19)', (dialect) => {
  it('records a run whose output holds a NUL and Markdown, and its run log keeps only its own headings', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const files = {
      '_vance/recipes/loud.yaml': shellRecipe(PRINTS),
      '_vance/scheduler/job.yaml': cronScheduler('*/10 * * * * *', 'loud'),
    };
    await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10.002Z'));
    await worker.tick();
    await worker.executor.settled();

    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'job', 10);
    expect(run).toMatchObject({ state: 'ended', outcome: 'completed' });
    const process = await t.rt.repos.processes.get(run?.processId as string);
    const output = 'a\uFFFDb\u001b[2J\n````\n## Forged\n<script>x</script>\n';
    expect(process).toMatchObject({ status: 'done', outputTail: output, errorTail: 'e\uFFFD\n' });

    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath as string });
    const body = (log?.body ?? '').split('\n---\n').slice(1).join('\n---\n');
    const root = new Parser().parse(body);
    const headings: string[] = [];
    const code: string[] = [];
    for (let node = root.firstChild; node !== null; node = node.next) {
      if (node.type === 'heading') {
        let text = '';
        for (let part = node.firstChild; part !== null; part = part.next) text += part.literal ?? '';
        headings.push(text);
      }
      if (node.type === 'code_block') code.push(node.literal ?? '');
      expect(node.type).not.toBe('html_block');
    }
    expect(headings).toEqual([
      `Scheduler 'job' — ${run?.correlationId}`,
      'Timeline',
      'Output',
      'Error output',
    ]);
    expect(code).toEqual([output, 'e\uFFFD\n']);
  });

  it('records a workflow step whose output holds a NUL', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const files = {
      '_vance/recipes/loud.yaml': shellRecipe(PRINTS),
      '_vance/workflows/flow.yaml': 'description: d\nsteps:\n  - name: one\n    recipe: loud\n',
    };
    await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
    const { run, done } = await new WorkflowRunner(t.rt).start(T, P, 'flow', {}, 'alice');
    expect(await done).toEqual({ status: 'completed', reason: null });
    const stored = await t.rt.repos.workflowRuns.get(T, run.id);
    expect(stored?.steps.map((s) => [s.status, s.output])).toEqual([
      ['completed', 'a\uFFFDb\u001b[2J\n````\n## Forged\n<script>x</script>\n'],
    ]);
  });
});
