import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { libraryActor } from '../../src/store/audit.js';
import { type TestApp, testApp } from '../support/http.js';
import { shellRecipe } from '../support/project.js';
import { until } from '../support/until.js';

// Issue #10 item 5: workflow documents and runs through the REST API (inject(), SQLite).

const PROJECT = '/brain/acme/project/ops';
const WORKFLOW = `description: Say twice
parameters:
  who: world
steps:
  - name: first
    recipe: say
    params: { text: "hi \${{ params.who }}" }
  - name: second
    recipe: say
    params: { text: "again: \${{ steps.first.output | strip }}" }
`;

let a: TestApp;
beforeEach(async () => {
  a = await testApp('sqlite');
  await a.t.rt.repos.documents.put(
    { tenant: 'acme', project: 'ops', path: '_vance/recipes/say.yaml' },
    shellRecipe('printf "%s\\n" "$URSA_PARAM_TEXT"'),
    libraryActor('alice'),
    a.t.clock.now(),
  );
});
afterEach(async () => {
  await a.close();
});

function call(method: 'GET' | 'PUT' | 'POST', url: string, token: string, payload?: object) {
  return a.app.inject({
    method,
    url,
    headers: a.auth(token),
    ...(payload === undefined ? {} : { payload }),
  });
}

describe('workflow endpoints (issue #10)', () => {
  it('sets, lists and gets a workflow document; a broken one is refused with its field path and changes nothing', async () => {
    const created = await call('PUT', `${PROJECT}/workflows/greet`, a.tokens.write, { yaml: WORKFLOW });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ path: '_vance/workflows/greet.yaml', created: true, version: 1 });
    const refused = await call('PUT', `${PROJECT}/workflows/greet`, a.tokens.write, {
      yaml: WORKFLOW.replace('steps.first.output', 'steps.third.output'),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      code: 'WORKFLOW_INVALID',
      errors: [expect.objectContaining({ path: 'steps[1].params.text' })],
    });
    const list = await call('GET', `${PROJECT}/workflows`, a.tokens.read);
    expect(list.json().workflows.map((w: { path: string; version: number }) => [w.path, w.version])).toEqual([
      ['_vance/workflows/greet.yaml', 1],
    ]);
    expect((await call('GET', `${PROJECT}/workflows/greet`, a.tokens.read)).json().body).toBe(WORKFLOW);
  });

  it('starts a run, reads it with its steps, and answers another tenant with 404', async () => {
    await call('PUT', `${PROJECT}/workflows/greet`, a.tokens.write, { yaml: WORKFLOW });
    const started = await call('POST', `${PROJECT}/workflows/greet/runs`, a.tokens.write, {
      params: { who: 'api' },
    });
    expect(started.statusCode).toBe(201);
    const { workflowRunId } = started.json() as { workflowRunId: string };
    expect(workflowRunId).toMatch(/^[0-9a-f]{8}$/);
    const url = `${PROJECT}/workflow-runs/${workflowRunId}`;
    await until(
      async () => (await call('GET', url, a.tokens.read)).json().status === 'completed',
      'the run ends',
    );
    const run = (await call('GET', url, a.tokens.read)).json();
    expect(
      run.steps.map((s: { name: string; status: string; output: string }) => [s.name, s.status, s.output]),
    ).toEqual([
      ['first', 'completed', 'hi api\n'],
      ['second', 'completed', 'again: hi api\n'],
    ]);
    expect((await call('GET', url, a.tokens.other)).statusCode).toBe(404);
    expect((await call('POST', `${url}/stop`, a.tokens.write)).json()).toEqual({ stopping: false });
  });

  it('refuses a start with an undeclared parameter as a problem naming params.<name>', async () => {
    await call('PUT', `${PROJECT}/workflows/greet`, a.tokens.write, { yaml: WORKFLOW });
    const res = await call('POST', `${PROJECT}/workflows/greet/runs`, a.tokens.write, {
      params: { whom: 'x' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'ARGUMENT_INVALID',
      errors: [expect.objectContaining({ path: 'params.whom' })],
    });
    expect(await a.t.rt.repos.workflowRuns.list('acme', 'ops', 10)).toEqual([]);
  });
});
