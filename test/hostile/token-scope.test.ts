import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, PROBLEM, SCHEDULER_YAML, type TestApp, testApp, WORKFLOW_YAML } from '../support/http.js';
import { registeredRoutes } from '../support/routes.js';
import { snapshot } from '../support/snapshot.js';
import { until } from '../support/until.js';

// Issue #19 item 7: a token narrowed further than its role — a scope of one project of its tenant
// (`_tenant` only when named), an expiry — answers exactly as a token of another tenant does
// (404 with the body of a missing resource) everywhere else, on every registered route, so a route
// added later is covered without editing this file. Rotation and revocation: test/hostile/tokens.test.ts.

const P = '/brain/acme/project/ops';

/** Routes that answer without a token (README "REST API and authentication"); any other must be guarded. */
const PUBLIC =
  /^GET (\/|\/healthz|\/readyz|\/metrics|\/openapi\.json|\/docs(\/.*)?|\/assets\/\{file\}|\/[a-z-]+\.html)$/;

/** The agent callbacks (issue #25): they take a run credential, never a token (test/e2e/agent-runs.test.ts). */
const AGENT_CALLBACK = /^POST \/v1\/agent-runs\/\{runId\}\/(heartbeat|status|output|complete)$/;

/** What each callback's body holds besides its attempt. */
const CALLBACK_FIELDS: Record<string, object> = {
  heartbeat: {},
  status: { status: 'running' },
  output: { text: 'x' },
  complete: { status: 'done' },
};

/** A valid recipe document. */
const RECIPE_YAML = 'description: scope matrix\nengine: noop\n';

/** A valid body for the routes that need one (a route added later that needs one fails the control). */
const BODIES: Record<string, unknown> = {
  'PUT /brain/{tenant}/project/{project}/scheduler/{name}': { yaml: SCHEDULER_YAML },
  'PUT /brain/{tenant}/project/{project}/workflows/{name}': { yaml: WORKFLOW_YAML },
  'PUT /brain/{tenant}/project/{project}/recipes/{name}': { yaml: RECIPE_YAML },
  'POST /brain/{tenant}/project/{project}/processes/{id}/stop': { reason: 'scope matrix' },
  'POST /brain/{tenant}/project/{project}/scheduler/{name}/backfill': {
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-01T00:00:00Z',
  },
  'POST /brain/{tenant}/project/{project}/scheduler/{name}/restore': { version: 1 },
  // The seed's trashed document.
  'POST /brain/{tenant}/project/{project}/documents/restore': (s: Seeded) => ({ path: s.trashPath }),
  'POST /brain/{tenant}/inbox/read': { ids: [1] },
  'POST /brain/{tenant}/inbox/{id}/answer': { answer: 'scope matrix' },
  'POST /mcp': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
};

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** What the seed left in acme/ops, by the route parameter that names it. */
interface Seeded {
  readonly correlationId: string;
  readonly processId: string;
  readonly logPath: string;
  readonly workflowRunId: string;
  /** A deleted scheduler's document in the trash. */
  readonly trashPath: string;
}

async function seed(a: TestApp): Promise<Seeded> {
  expect(
    (await a.request('PUT', `${P}/scheduler/job`, a.tokens.write, { yaml: SCHEDULER_YAML })).statusCode,
  ).toBe(201);
  expect(
    (await a.request('PUT', `${P}/workflows/job`, a.tokens.write, { yaml: WORKFLOW_YAML })).statusCode,
  ).toBe(201);
  expect((await a.request('PUT', `${P}/recipes/job`, a.tokens.write, { yaml: RECIPE_YAML })).statusCode).toBe(
    201,
  );
  const worker = a.t.worker();
  await worker.bootstrap();
  const fire = await a.request('POST', `${P}/scheduler/job/fire`, a.tokens.write);
  const { correlationId, logPath } = fire.json() as { correlationId: string; logPath: string };
  await worker.reap();
  await worker.executor.settled();
  const run = await a.t.rt.repos.runs.get(correlationId);
  expect(run?.outcome).toBe('completed');
  const started = await a.request('POST', `${P}/workflows/job/runs`, a.tokens.write, { params: {} });
  expect(started.statusCode).toBe(201);
  const { workflowRunId } = started.json() as { workflowRunId: string };
  // Let the run end, so nothing moves in the store while the matrix compares it.
  await until(async () => (await a.t.rt.repos.workflowRuns.get('acme', workflowRunId))?.status !== 'running');
  expect(
    (await a.request('PUT', `${P}/scheduler/gone`, a.tokens.write, { yaml: SCHEDULER_YAML })).statusCode,
  ).toBe(201);
  const { trashPath } = (await a.request('DELETE', `${P}/scheduler/gone`, a.tokens.write)).json() as {
    trashPath: string;
  };
  return { correlationId, processId: run?.processId as string, logPath, workflowRunId, trashPath };
}

/** A registered route as a request on `project` of acme, its parameters naming what the seed made. */
function requestFor(route: string, s: Seeded, project: string) {
  const [method, template] = route.split(' ') as [string, string];
  const url = template.replace(/\{([^}]+)\}/g, (_all, name: string) => {
    if (name === 'tenant') return 'acme';
    if (name === 'project') return project;
    if (name === 'name') return 'job';
    if (name === 'correlationId') return s.correlationId;
    if (name === 'version') return '1';
    if (name === '*') return s.logPath;
    if (name === 'id' && template.includes('/processes/')) return s.processId;
    if (name === 'id' && template.includes('/workflow-runs/')) return s.workflowRunId;
    if (name === 'id' && template.includes('/inbox/')) return '1';
    throw new Error(`${route}: the scope matrix has no value for {${name}}; add one`);
  });
  const isMcp = template === '/mcp';
  const body = BODIES[route];
  return {
    method: method as 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: isMcp ? `/mcp?project=${project}` : url,
    headers: isMcp ? MCP_HEADERS : {},
    payload: typeof body === 'function' ? body(s) : body,
  };
}

describe.each(DIALECTS)('project-scoped and expiring tokens on %s (issue #19)', (dialect) => {
  let a: TestApp;
  let s: Seeded;
  /** acme admin tokens scoped to one project each. */
  const scoped: Record<'ops' | 'dev' | '_tenant', string> = { ops: '', dev: '', _tenant: '' };
  let guarded: string[];
  beforeAll(async () => {
    a = await testApp(dialect);
    s = await seed(a);
    for (const project of Object.keys(scoped) as (keyof typeof scoped)[]) {
      scoped[project] = (
        await a.t.rt.repos.tokens.create(
          { tenant: 'acme', project, role: 'admin', user: 'ada' },
          a.t.clock.now(),
        )
      ).secret;
    }
    const routes = registeredRoutes(a.app);
    guarded = routes.filter((r) => !PUBLIC.test(r) && !AGENT_CALLBACK.test(r));
    // Every route that is not public is under /brain/{tenant}/… or is /mcp: the ones checked below.
    expect(guarded.filter((r) => !/^[A-Z]+ (\/brain\/\{tenant\}\/|\/mcp$)/.test(r))).toEqual([]);
    expect(guarded.length).toBeGreaterThanOrEqual(22);
  });
  afterAll(async () => {
    await a.close();
  });

  function send(r: ReturnType<typeof requestFor>, token: string) {
    return a.app.inject({
      method: r.method,
      url: r.url,
      headers: { ...r.headers, ...a.auth(token) },
      ...(r.payload === undefined ? {} : { payload: r.payload as object }),
    });
  }

  it("answers a token scoped to another project, or to _tenant, on every route of a project and every tenant-wide route with a missing resource's 404; nothing changes (issue #19)", async () => {
    const before = await snapshot(a.t.store);
    let checked = 0;
    for (const route of guarded) {
      for (const scope of ['dev', '_tenant'] as const) {
        const res = await send(requestFor(route, s, 'ops'), scoped[scope]);
        expect(res.statusCode, `${route} with a token of ${scope}: ${res.body}`).toBe(404);
        expect(res.headers['content-type']).toBe(PROBLEM);
        expect(res.json()).toEqual(NOT_FOUND);
        checked++;
      }
    }
    expect(checked).toBe(guarded.length * 2);
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('lets a token scoped to ops reach every route of ops, and nothing tenant-wide (issue #19)', async () => {
    // DELETE last: it trashes the scheduler the other routes name.
    const order = [...guarded].sort(
      (x, y) => Number(x.startsWith('DELETE')) - Number(y.startsWith('DELETE')),
    );
    for (const route of order) {
      const res = await send(requestFor(route, s, 'ops'), scoped.ops);
      const tenantWide = !route.includes('{project}') && route !== 'POST /mcp';
      if (tenantWide) {
        expect(res.statusCode, `${route}: ${res.body}`).toBe(404);
        expect(res.json()).toEqual(NOT_FOUND);
      } else {
        expect([200, 201, 202], `${route}: ${res.body}`).toContain(res.statusCode);
      }
    }
  });

  // decisions §6: a run credential is no bearer token, and no bearer token is a run credential.
  it('refuses every token of the API on the agent callbacks, admin included, with 401; nothing changes (issue #25)', async () => {
    const callbacks = registeredRoutes(a.app).filter((r) => AGENT_CALLBACK.test(r));
    expect(callbacks).toHaveLength(4);
    const before = await snapshot(a.t.store);
    for (const route of callbacks) {
      const url = route.slice('POST '.length).replace('{runId}', 'run_nope');
      for (const token of [a.tokens.admin, scoped.ops]) {
        const kind = url.slice(url.lastIndexOf('/') + 1);
        const res = await a.request('POST', url, token, {
          fencingToken: 1,
          attempt: 1,
          ...CALLBACK_FIELDS[kind],
        });
        expect([res.statusCode, res.json().code], `${route}: ${res.body}`).toEqual([401, 'UNAUTHENTICATED']);
      }
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('reaches _tenant paths only with a token that names _tenant, over REST and MCP (issue #19)', async () => {
    const T = '/brain/acme/project/_tenant';
    const put = (token: string) => a.request('PUT', `${T}/scheduler/shared`, token, { yaml: SCHEDULER_YAML });
    const list = (token: string) => a.request('GET', `${T}/documents?prefix=_vance/`, token);
    const mcp = (token: string) =>
      a.request('POST', '/mcp?project=_tenant', token, BODIES['POST /mcp'], MCP_HEADERS);
    for (const token of [scoped.ops, scoped.dev]) {
      for (const res of [await put(token), await list(token), await mcp(token)]) {
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual(NOT_FOUND);
      }
    }
    expect(await a.t.rt.repos.documents.list('acme', '_tenant', '')).toEqual([]);
    expect((await put(scoped._tenant)).statusCode).toBe(201);
    const listed = await list(scoped._tenant);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().documents.map((d: { path: string }) => d.path)).toEqual([
      '_vance/scheduler/shared.yaml',
    ]);
    const tools = await mcp(scoped._tenant);
    expect(tools.statusCode).toBe(200);
    expect(tools.json().result.tools.map((t: { name: string }) => t.name)).toContain('scheduler_set');
    // An unscoped token of the tenant still reaches _tenant.
    expect((await list(a.tokens.read)).statusCode).toBe(200);
  });

  it('acts over MCP only in the project of its scope (issue #19)', async () => {
    const call = (token: string, project: string) =>
      a.request(
        'POST',
        `/mcp?project=${project}`,
        token,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'scheduler_list', arguments: {} } },
        MCP_HEADERS,
      );
    const own = await call(scoped.ops, 'ops');
    expect(own.statusCode).toBe(200);
    expect(own.json().result.isError).toBeUndefined();
    const other = await call(scoped.dev, 'ops');
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(NOT_FOUND);
  });

  it('refuses an expired token from its expiry instant on with 401 "expired", over REST and MCP, and says nothing more (issue #19)', async () => {
    const now = a.t.clock.now();
    const { token, secret } = await a.t.rt.repos.tokens.create(
      { tenant: 'acme', role: 'read', user: 'rita', expiresAt: now + 3_600_000 },
      now,
    );
    expect(token.expiresAt).toBe(now + 3_600_000);
    const rest = () => a.request('GET', `${P}/scheduler`, secret);
    const mcp = () => a.request('POST', '/mcp?project=ops', secret, BODIES['POST /mcp'], MCP_HEADERS);
    try {
      a.t.clock.set(now + 3_600_000 - 1);
      expect((await rest()).statusCode).toBe(200);
      expect((await mcp()).statusCode).toBe(200);
      a.t.clock.set(now + 3_600_000);
      const expired = {
        type: 'https://ursa.dev/errors#unauthenticated',
        title: 'UNAUTHENTICATED',
        status: 401,
        code: 'UNAUTHENTICATED',
        detail: 'the bearer token has expired',
      };
      for (const res of [await rest(), await mcp()]) {
        expect(res.statusCode).toBe(401);
        expect(res.headers['content-type']).toBe(PROBLEM);
        expect(res.json()).toEqual(expired);
      }
      // Revoked, it is unknown like any other revoked token: "expired" is only for a live secret.
      expect(await a.t.rt.repos.tokens.revoke(token.id, a.t.clock.now())).toBe(true);
      expect((await rest()).json().detail).toBe('the bearer token is unknown or revoked');
    } finally {
      a.t.clock.set(now);
    }
  });

  it('records the last use at most once a minute: one conditional UPDATE when the recorded one is 60 s old (issue #19)', async () => {
    const updates: string[] = [];
    const counting = await testApp(dialect, '2026-06-01T08:00:00Z', {
      store: {
        onQuery: (sql) => {
          if (/^update "tokens"/i.test(sql)) updates.push(sql);
        },
      },
    });
    try {
      const t0 = counting.t.clock.now();
      const { secret, token } = await counting.t.rt.repos.tokens.create(
        { tenant: 'acme', role: 'read', user: 'rita' },
        t0,
      );
      const get = () => counting.request('GET', `${P}/scheduler`, secret);
      const stamp = async () =>
        (await counting.t.rt.repos.tokens.list()).find((x) => x.id === token.id)?.lastUsedAt;
      expect(await stamp()).toBeNull();
      for (let i = 0; i < 5; i++) expect((await get()).statusCode).toBe(200);
      expect([updates.length, await stamp()]).toEqual([1, t0]);
      counting.t.clock.set(t0 + 59_999);
      for (let i = 0; i < 5; i++) expect((await get()).statusCode).toBe(200);
      expect([updates.length, await stamp()]).toEqual([1, t0]);
      counting.t.clock.set(t0 + 60_000);
      for (let i = 0; i < 5; i++) expect((await get()).statusCode).toBe(200);
      expect([updates.length, await stamp()]).toEqual([2, t0 + 60_000]);
      // The statement itself carries the condition, so concurrent first uses write one time.
      expect(updates[1]).toMatch(/"last_used_at" is null or "last_used_at" <= /);
      // A refused secret is no use: an expired token is not written.
      const expiring = await counting.t.rt.repos.tokens.create(
        { tenant: 'acme', role: 'read', user: 'rita', expiresAt: t0 + 60_000 },
        t0,
      );
      expect((await counting.request('GET', `${P}/scheduler`, expiring.secret)).statusCode).toBe(401);
      expect(updates.length).toBe(2);
      expect(
        (await counting.t.rt.repos.tokens.list()).find((x) => x.id === expiring.token.id)?.lastUsedAt,
      ).toBeNull();
    } finally {
      await counting.close();
    }
  });
});
