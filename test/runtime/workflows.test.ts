import { afterEach, describe, expect, it } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import { WorkflowRunner } from '../../src/runtime/workflow-runner.js';
import { applyDirectory } from '../../src/service/apply.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import { parseWorkflowDocument } from '../../src/workflows/parse.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The test's runtime (each test of a dialect makes one). */
function rt(): TestRuntime {
  if (t === undefined) throw new Error('no test runtime');
  return t;
}

const T = 'acme';
const P = 'ops';
const at = (iso: string) => Date.parse(iso);

/** A workflow: fetch prints a greeting; shout prints it back upper-cased, with a parameter. */
const GREETING = `description: Two steps, the second uses the first's output
parameters:
  who: world
  mark: "!"
steps:
  - name: fetch
    recipe: say
    params:
      text: "hello \${{ params.who }}"
  - name: shout
    recipe: say
    params:
      text: "\${{ steps.fetch.output | strip | upcase }}\${{ params.mark }}"
`;

/** Prints its `text` param, verbatim. */
const SAY = shellRecipe('printf "%s\\n" "$URSA_PARAM_TEXT"');

async function project(files: Record<string, string>) {
  const entries = await applyDirectory(rt().rt, projectFolder(files), T, P, libraryActor('alice'));
  expect(entries.map((e) => [e.path, e.status]).sort()).toEqual(
    Object.keys(files)
      .sort()
      .map((path) => [path, 'created']),
  );
}

describe('workflow documents (issue #10)', () => {
  it('refuses a reference to an undeclared parameter or a later step, naming the field', () => {
    const broken = `description: d
parameters: { who: ~ }
steps:
  - name: one
    recipe: say
    params: { text: "\${{ steps.two.output }}" }
  - name: two
    recipe: say
    params: { text: "\${{ params.nobody }}" }
`;
    let error: unknown;
    try {
      parseWorkflowDocument(broken, { name: 'broken', path: 'ops/_vance/workflows/broken.yaml' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UrsaError);
    expect((error as UrsaError).code).toBe('WORKFLOW_INVALID');
    expect((error as UrsaError).issues?.map((i) => i.path)).toEqual([
      'steps[0].params.text',
      'steps[1].params.text',
    ]);
  });
});

describe.each(DIALECTS)('workflow runs on %s (issue #10, spec §4.2)', (dialect) => {
  it("runs two steps in order in session _magrathea_<runId>; step 2 gets step 1's output", async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project({ '_vance/recipes/say.yaml': SAY, '_vance/workflows/greeting.yaml': GREETING });
    const runner = new WorkflowRunner(rt().rt);
    const { run, done } = await runner.start(T, P, 'greeting', { who: 'ursa' }, 'alice');
    expect(run.id).toMatch(/^[0-9a-f]{8}$/);
    expect(await done).toEqual({ status: 'completed', reason: null });
    const stored = await rt().rt.repos.workflowRuns.get(T, run.id);
    expect(stored).toMatchObject({
      status: 'completed',
      params: { who: 'ursa', mark: '!' },
      document: GREETING,
    });
    expect(stored?.steps.map((s) => [s.name, s.status, s.output?.trim()])).toEqual([
      ['fetch', 'completed', 'hello ursa'],
      ['shout', 'completed', 'HELLO URSA!'],
    ]);
    const session = await rt().rt.repos.sessions.get(run.sessionId);
    expect(session).toMatchObject({ name: `_magrathea_${run.id}`, ownerUser: 'alice' });
    for (const step of stored?.steps ?? [])
      expect(await rt().rt.repos.processes.get(step.processId ?? '')).toMatchObject({
        sessionId: run.sessionId,
        status: 'done',
      });
  });

  it('fails the run when its first step fails, and skips the rest', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project({
      '_vance/recipes/say.yaml': SAY,
      '_vance/recipes/broken.yaml': shellRecipe('echo no >&2; exit 3'),
      '_vance/workflows/fragile.yaml':
        'description: d\nsteps:\n  - name: first\n    recipe: broken\n  - name: second\n    recipe: say\n',
    });
    const { run, done } = await new WorkflowRunner(rt().rt).start(T, P, 'fragile', {}, 'alice');
    expect(await done).toEqual({ status: 'failed', reason: 'step first: exit code 3' });
    const stored = await rt().rt.repos.workflowRuns.get(T, run.id);
    expect(stored?.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
  });

  it('stops the running step and cancels the run when stopped', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project({
      '_vance/recipes/slow.yaml': shellRecipe('echo started; exec sleep 30'),
      '_vance/workflows/long.yaml':
        'description: d\nsteps:\n  - name: wait\n    recipe: slow\n  - name: after\n    recipe: slow\n',
    });
    const runner = new WorkflowRunner(rt().rt);
    const { run, done } = await runner.start(T, P, 'long', {}, 'alice');
    await until(
      async () => (await rt().rt.repos.workflowRuns.get(T, run.id))?.steps[0]?.status === 'running',
      'the first step runs',
    );
    // A stop requested from another process: the runner notices it within its poll.
    expect(await rt().rt.repos.workflowRuns.requestStop(T, run.id, rt().clock.now())).toBe(true);
    expect((await done).status).toBe('cancelled');
    const stored = await rt().rt.repos.workflowRuns.get(T, run.id);
    expect(stored?.steps.map((s) => s.status)).toEqual(['cancelled', 'skipped']);
    expect(await rt().rt.repos.processes.get(stored?.steps[0]?.processId ?? '')).toMatchObject({
      status: 'stopped',
    });
  });

  it('refuses a start with a parameter the workflow does not declare, and records nothing', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project({ '_vance/recipes/say.yaml': SAY, '_vance/workflows/greeting.yaml': GREETING });
    await expect(
      new WorkflowRunner(rt().rt).start(T, P, 'greeting', { whom: 'x' }, 'alice'),
    ).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'params.whom',
    });
    expect(await rt().rt.repos.workflowRuns.list(T, P, 10)).toEqual([]);
  });

  it('a scheduler with workflow: starts a run per occurrence, skips an occurrence while one is active, and its log follows the run', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project({
      '_vance/recipes/say.yaml': SAY,
      '_vance/recipes/slow.yaml': shellRecipe('sleep 30'),
      '_vance/workflows/nightly.yaml':
        'description: d\nparameters: { who: ~ }\nsteps:\n  - name: hold\n    recipe: slow\n',
      '_vance/scheduler/night.yaml': cronScheduler(
        '*/10 * * * * *',
        '',
        'overlap: skip\nparams: { who: night }\ninitialMessage: ignored\n',
      ).replace('recipe: \n', 'workflow: nightly\n'),
    });
    const worker = rt().worker();
    rt().clock.set(at('2026-06-01T08:00:10Z'));
    await worker.tick();
    let first: { workflowRunId?: string } = {};
    await until(async () => {
      const [line] = (await rt().store.db.selectFrom('feed').select(['kind', 'payload']).execute()).filter(
        (l) => l.kind === 'START',
      );
      first = line === undefined ? {} : (JSON.parse(line.payload) as typeof first);
      return first.workflowRunId !== undefined;
    }, 'the START line names the workflow run');
    const run = await rt().rt.repos.workflowRuns.get(T, first.workflowRunId ?? '');
    expect(run).toMatchObject({ workflow: 'nightly', status: 'running', params: { who: 'night' } });

    // The next occurrence finds the workflow run still active: overlap skip.
    rt().clock.set(at('2026-06-01T08:00:20Z'));
    await worker.tick();
    await until(
      async () =>
        (await rt().rt.repos.runs.listForScheduler(T, P, 'night', 10)).some(
          (r) => r.outcome === 'skipped_overlap',
        ),
      'the second occurrence is skipped',
    );

    await rt().rt.repos.workflowRuns.requestStop(T, run?.id ?? '', rt().clock.now());
    await until(
      async () =>
        (await rt().rt.repos.runs.listForScheduler(T, P, 'night', 10)).some((r) => r.outcome === 'cancelled'),
      'the scheduler run ends with its workflow run',
    );
    await worker.executor.settled();
    const [ended] = (await rt().rt.repos.runs.listForScheduler(T, P, 'night', 10)).filter(
      (r) => r.outcome === 'cancelled',
    );
    const log = await rt().rt.repos.documents.get({ tenant: T, project: P, path: ended?.logPath ?? '' });
    // An id of eight digits is quoted in the front matter (it stays a string), one with letters is not.
    expect(log?.body).toMatch(new RegExp(`\nworkflowRunId: "?${run?.id}"?\n`));
    expect(log?.body).toContain('outcome: cancelled');
    expect(log?.body).toContain('- hold (slow): cancelled');
    expect(log?.body).toContain(`STARTED    workflowRun=${run?.id} session=${run?.sessionId}`);
  });

  it('a one-shot with workflow: starts its run once and goes to the trash, as a recipe one-shot does (spec §10a)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await project({
      '_vance/recipes/say.yaml': SAY,
      '_vance/workflows/greeting.yaml': GREETING,
      '_vance/scheduler/once.yaml':
        'description: once\nat: "2026-06-01T08:00:30Z"\nworkflow: greeting\nparams: { who: once }\n',
    });
    const worker = rt().worker();
    rt().clock.set(at('2026-06-01T08:00:30Z'));
    expect((await worker.tick()).fired).toBe(1);
    await until(
      async () => (await rt().rt.repos.runs.listForScheduler(T, P, 'once', 10))[0]?.outcome === 'completed',
      'the one-shot run ends with its workflow run',
    );
    await worker.executor.settled();
    const [run] = await rt().rt.repos.workflowRuns.list(T, P, 10);
    expect(run).toMatchObject({
      workflow: 'greeting',
      status: 'completed',
      params: { who: 'once', mark: '!' },
    });
    expect(
      await rt().rt.repos.documents.get({ tenant: T, project: P, path: '_vance/scheduler/once.yaml' }),
    ).toBeUndefined();
    const trash = await rt().rt.repos.documents.list(T, P, '_vance/trash/');
    expect(trash.map((d) => d.path)).toEqual([expect.stringMatching(/_once\.yaml$/)]);
    expect(
      (await rt().rt.repos.schedules.get({ tenant: T, project: P, name: 'once' }))?.nextRunAt ?? null,
    ).toBeNull();
  });

  it('records a workflow fire as failed when the operator switched workflows off, and warns at write time', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect, settings: { workflowsEnabled: false } });
    await project({ '_vance/recipes/say.yaml': SAY, '_vance/workflows/greeting.yaml': GREETING });
    const written = await setScheduler(
      rt().rt,
      { tenant: T, project: P, user: 'alice', role: 'admin' },
      'greeter',
      'description: d\ncron: "*/10 * * * * *"\ntimezone: UTC\nworkflow: greeting\n',
    );
    expect(written.warnings).toEqual([expect.stringContaining('workflows are switched off by the operator')]);
    // `ursa apply` says the same of each workflow scheduler it writes.
    const applied = await applyDirectory(
      rt().rt,
      projectFolder({
        '_vance/scheduler/other.yaml':
          'description: d\ncron: "0 0 * * * *"\ntimezone: UTC\nworkflow: greeting\n',
      }),
      T,
      P,
      libraryActor('alice'),
    );
    expect(applied).toEqual([
      {
        path: '_vance/scheduler/other.yaml',
        status: 'created',
        message: expect.stringContaining('workflows are switched off by the operator'),
      },
    ]);
    const worker = rt().worker();
    rt().clock.set(at('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    const [run] = await rt().rt.repos.runs.listForScheduler(T, P, 'greeter', 10);
    expect(run).toMatchObject({
      outcome: 'failed',
      reason: 'workflows are switched off by the operator (workflows: false)',
    });
    expect(await rt().rt.repos.workflowRuns.list(T, P, 10)).toEqual([]);
    const lines = await rt().store.db.selectFrom('feed').select(['kind', 'outcome']).execute();
    expect(lines).toEqual([{ kind: 'END', outcome: 'failed' }]);
  });
});
