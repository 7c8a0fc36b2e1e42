import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, SCHEDULER_YAML, type TestApp, testApp, WORKFLOW_YAML } from '../support/http.js';
import { snapshot } from '../support/snapshot.js';
import { until } from '../support/until.js';

// decisions §6: "A token never sees another tenant's data (404, not 403)." The scheduler, run,
// document, process and inbox endpoints are proved in test/http/auth.test.ts (the 404 matrix: every
// endpoint, another tenant's admin and read tokens, the body of a missing resource, nothing
// changed). This file covers the rest of the surface: the workflow endpoints and MCP over HTTP,
// for reads and writes, with the same body for an existing and a missing resource.

const P = '/brain/acme/project/ops';

type Method = 'GET' | 'PUT' | 'POST';

describe.each(DIALECTS)('tenant isolation beyond the scheduler endpoints on %s (decisions §6)', (dialect) => {
  let a: TestApp;
  let runId: string;
  let otherRead: string;
  beforeAll(async () => {
    a = await testApp(dialect);
    expect(
      (await a.request('PUT', `${P}/scheduler/job`, a.tokens.write, { yaml: SCHEDULER_YAML })).statusCode,
    ).toBe(201);
    expect(
      (await a.request('PUT', `${P}/workflows/flow`, a.tokens.write, { yaml: WORKFLOW_YAML })).statusCode,
    ).toBe(201);
    const started = await a.request('POST', `${P}/workflows/flow/runs`, a.tokens.write, { params: {} });
    expect(started.statusCode).toBe(201);
    runId = (started.json() as { workflowRunId: string }).workflowRunId;
    // Let the run end, so nothing moves in the store while the tests compare it.
    await until(async () => (await a.t.rt.repos.workflowRuns.get('acme', runId))?.status !== 'running');
    otherRead = (await a.t.rt.repos.tokens.create({ tenant: 'other', role: 'read', user: 'otto' }, 0)).secret;
  });
  afterAll(async () => {
    await a.close();
  });

  /** Each workflow endpoint on acme's resources, and its twin on a resource acme does not have. */
  function endpoints(): readonly (readonly [Method, string, string, object | undefined])[] {
    return [
      ['GET', `${P}/workflows`, `/brain/acme/project/nothing/workflows`, undefined],
      ['GET', `${P}/workflows/flow`, `${P}/workflows/nope`, undefined],
      ['PUT', `${P}/workflows/flow`, `${P}/workflows/nope`, { yaml: WORKFLOW_YAML.replace('w', 'x') }],
      ['POST', `${P}/workflows/flow/runs`, `${P}/workflows/nope/runs`, { params: {} }],
      ['GET', `${P}/workflow-runs/${runId}`, `${P}/workflow-runs/00000000`, undefined],
      ['POST', `${P}/workflow-runs/${runId}/stop`, `${P}/workflow-runs/00000000/stop`, undefined],
    ];
  }

  it("answers another tenant's admin and read tokens 404 with the body of a missing resource, for reads and writes, changing nothing", async () => {
    const before = await snapshot(a.t.store);
    for (const [method, url, missing, payload] of endpoints()) {
      for (const [who, token] of [
        ['other admin', a.tokens.other],
        ['other read', otherRead],
      ] as const) {
        for (const target of [url, missing]) {
          const res = await a.request(method, target, token, payload);
          expect(res.statusCode, `${method} ${target} as ${who}`).toBe(404);
          expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
          expect(res.json()).toEqual(NOT_FOUND);
        }
      }
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it("the same requests with acme's own admin token succeed, so the 404s above were the tenant check", async () => {
    for (const [method, url, , payload] of endpoints()) {
      const res = await a.request(method, url, a.tokens.admin, payload);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      const started = (res.json() as { workflowRunId?: string }).workflowRunId;
      if (started !== undefined && method === 'POST') {
        await until(async () => (await a.t.rt.repos.workflowRuns.get('acme', started))?.status !== 'running');
      }
    }
  });

  it("MCP over HTTP acts in the token's own tenant: ?tenant=acme with another tenant's token sees and changes nothing of acme", async () => {
    const before = await snapshot(a.t.store);
    const rpc = async (id: number, name: string, args: object) => {
      const res = await a.app.inject({
        method: 'POST',
        url: '/mcp?tenant=acme&project=ops',
        headers: {
          ...a.auth(a.tokens.other),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        payload: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
      });
      expect(res.statusCode).toBe(200);
      return res.json() as {
        result: { isError?: boolean; structuredContent?: unknown; content: { text: string }[] };
      };
    };
    expect((await rpc(1, 'scheduler_list', {})).result.structuredContent).toEqual({ schedulers: [] });
    const get = await rpc(2, 'scheduler_get', { name: 'job' });
    expect(get.result.isError).toBe(true);
    expect(get.result.content[0]?.text).toBe(
      'NOT_FOUND: there is no scheduler "job" in project ops; scheduler_list shows the ones there are',
    );
    const del = await rpc(3, 'scheduler_delete', { name: 'job' });
    expect(del.result.content[0]?.text).toMatch(/^NOT_FOUND: /);
    const fire = await rpc(4, 'scheduler_fire', { name: 'job' });
    expect(fire.result.content[0]?.text).toMatch(/^NOT_FOUND: /);
    const list = await rpc(5, 'document_list', { prefix: '_vance/logs/scheduler/' });
    expect(list.result.structuredContent).toEqual({ paths: [], nextCursor: null, truncated: false });
    expect(await snapshot(a.t.store)).toEqual(before);
    // A write lands in the token's tenant, never in acme.
    const set = await rpc(6, 'scheduler_set', { name: 'job', yaml: SCHEDULER_YAML });
    expect(set.result.isError).toBeUndefined();
    const acme = await a.t.rt.repos.documents.get({
      tenant: 'acme',
      project: 'ops',
      path: '_vance/scheduler/job.yaml',
    });
    const other = await a.t.rt.repos.documents.get({
      tenant: 'other',
      project: 'ops',
      path: '_vance/scheduler/job.yaml',
    });
    expect(acme?.createdBy).toBe('wes');
    expect(other?.createdBy).toBe('olga');
  });
});
