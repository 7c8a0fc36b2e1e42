import type { FastifyInstance, HTTPMethods } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { repositories, type Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import type { TestDatabase } from '../support/dialects.js';
import { proxiedPostgres, runtimeOn, type TcpProxy } from '../support/faults.js';
import { PROBLEM, SCHEDULER_YAML, WORKFLOW_YAML } from '../support/http.js';

// A store outage over HTTP (issue #19): every request was authenticated against the store, so
// while PostgreSQL was away every request with a token answered 500. Now every endpoint that needs
// the store answers 503 STORE_UNAVAILABLE (problem+json, no driver text) whether its caller's token
// could be checked or not, never 500 or 401; /healthz stays 200 and /readyz 503; once the store is
// back everything answers as before. The routes are those the app registered, so a new one is
// covered without editing this test; PostgreSQL through a TCP proxy the test cuts.

const SECONDS = Date.parse('2026-06-01T08:00:00Z');
const VALUES: Readonly<Record<string, string>> = {
  tenant: 'acme',
  project: 'ops',
  name: 'job',
  correlationId: 'run_none',
  id: '0badf00d',
  file: 'none.js',
  version: '1',
};
/** Bodies that pass each route's schema, so that a write reaches the store. */
const BODIES: Readonly<Record<string, unknown>> = {
  'PUT /brain/:tenant/project/:project/scheduler/:name': { yaml: SCHEDULER_YAML },
  'PUT /brain/:tenant/project/:project/workflows/:name': { yaml: WORKFLOW_YAML },
  'PUT /brain/:tenant/project/:project/recipes/:name': { yaml: 'description: r\nengine: noop\n' },
  'POST /brain/:tenant/project/:project/workflows/:name/runs': { params: { nope: 1 } },
  'POST /brain/:tenant/project/:project/scheduler/:name/backfill': {
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-01T00:00:00Z',
  },
  'POST /brain/:tenant/project/:project/scheduler/:name/restore': { version: 1 },
  'POST /brain/:tenant/project/:project/documents/restore': { path: '_vance/trash/none_job.yaml' },
  'POST /brain/:tenant/inbox/read': { ids: [1] },
  'POST /brain/:tenant/inbox/:id/answer': { answer: 'main' },
  // The agent callbacks (issue #25): their credential is checked in the store too.
  'POST /v1/agent-runs/:runId/heartbeat': { fencingToken: 1, attempt: 1 },
  'POST /v1/agent-runs/:runId/status': { fencingToken: 1, attempt: 1, status: 'running' },
  'POST /v1/agent-runs/:runId/output': { fencingToken: 1, attempt: 1, text: 'x' },
  'POST /v1/agent-runs/:runId/complete': { fencingToken: 1, attempt: 1, status: 'done' },
  'POST /mcp': {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'scheduler_list', arguments: {} },
  },
};
const QUERIES: Readonly<Record<string, string>> = { '/mcp': '?project=ops' };
/** The routes that need no store (the page, the API reference, liveness, metrics): they answer as ever. */
const NO_STORE = /^\/(?:$|docs|healthz$|metrics$|scheduler\.html$|assets\/|openapi\.json$)/;

interface Route {
  readonly method: HTTPMethods;
  readonly path: string;
}

/** Every route and method the app registered (HEAD aside), from Fastify's own route tree. */
function routesOf(app: FastifyInstance): Route[] {
  const stack: string[] = [];
  const routes: Route[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (m === null) continue;
    const depth = (m[1] as string).length / 4;
    stack.length = depth;
    // The tree leaves out the slash before a wildcard (`documents` → `*` is `documents/*`).
    const segment = m[2] as string;
    stack.push(segment.startsWith('*') && !stack.join('').endsWith('/') ? `/${segment}` : segment);
    const path = stack.join('');
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '' && x !== 'HEAD'))
      routes.push({ method: method as HTTPMethods, path });
  }
  return routes;
}

function request(app: FastifyInstance, route: Route, token?: string) {
  // An inbox item's id is a number (issue #25); the other ids are text.
  const url = route.path
    .replace(/:(\w+)/g, (_, p: string) =>
      p === 'id' && route.path.includes('/inbox/') ? '1' : (VALUES[p] ?? 'x'),
    )
    .replace('*', 'x');
  const body = BODIES[`${route.method} ${route.path}`];
  return app.inject({
    method: route.method,
    url: `${url}${QUERIES[route.path] ?? ''}`,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(route.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}),
    },
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

let database: TestDatabase | undefined;
let proxy: TcpProxy | undefined;
const stores: Store[] = [];
const apps: FastifyInstance[] = [];
afterEach(async () => {
  proxy?.restore();
  for (const app of apps.splice(0)) await app.close();
  for (const store of stores.splice(0)) await store.close();
  await proxy?.close();
  await database?.drop();
  proxy = database = undefined;
});

describe('PostgreSQL unavailable: every endpoint that needs the store answers 503 (issue #19)', () => {
  it('answers 503 STORE_UNAVAILABLE, never 500 or 401, on every registered route; normal again once it is back', {
    timeout: 60_000,
  }, async () => {
    const opened = await proxiedPostgres();
    ({ database, proxy } = opened);
    const { direct, proxied } = opened;
    const cable = opened.proxy;
    stores.push(direct, proxied);
    const clock = fixedClock(SECONDS);
    const admin = (
      await repositories(direct).tokens.create({ tenant: 'acme', role: 'admin', user: 'ada' }, SECONDS)
    ).secret;
    // Everything through the proxy; and one whose tokens are checked on the direct connection, so
    // that requests get past authentication and each route's own store work meets the outage.
    const rt = runtimeOn(proxied, clock);
    const app = await buildApp({ rt });
    const past = await buildApp({
      rt: { ...rt, repos: { ...rt.repos, tokens: repositories(direct).tokens } },
    });
    apps.push(app, past);
    expect(
      (
        await app.inject({
          method: 'PUT',
          url: '/brain/acme/project/ops/scheduler/job',
          headers: { authorization: `Bearer ${admin}` },
          payload: { yaml: SCHEDULER_YAML },
        })
      ).statusCode,
    ).toBe(201);

    const routes = routesOf(app);
    expect(routes.length).toBeGreaterThan(25);
    expect(routes).toContainEqual({ method: 'PUT', path: '/brain/:tenant/project/:project/scheduler/:name' });
    // Each route's answer with the store up, from the second pass (the first creates and deletes
    // what later passes find or miss in the same way).
    const before = new Map<string, number>();
    for (let pass = 0; pass < 2; pass++) {
      for (const route of routes) {
        const res = await request(app, route, admin);
        expect(res.statusCode, `${route.method} ${route.path}: ${res.body.slice(0, 200)}`).toBeLessThan(500);
        before.set(`${route.method} ${route.path}`, res.statusCode);
      }
    }

    cable.cut();
    const unavailable = (detail: string) => ({
      type: 'https://ursa.dev/errors#store_unavailable',
      title: 'STORE_UNAVAILABLE',
      status: 503,
      code: 'STORE_UNAVAILABLE',
      detail,
    });
    const seen: string[] = [];
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      const cases = [
        [app, admin, 'a valid token'],
        [app, 'not-a-token', 'an unknown token'],
        [past, admin, 'a token checked elsewhere'],
      ] as const;
      for (const [target, token, what] of cases) {
        const res = await request(target, route, token);
        const where = `${key} with ${what}: ${res.statusCode} ${res.body.slice(0, 200)}`;
        if (NO_STORE.test(route.path)) {
          expect(res.statusCode, where).toBe(before.get(key));
        } else if (route.path === '/mcp' && target === past) {
          // Past authentication, MCP answers in JSON-RPC: the tool's error says the store is unavailable.
          expect(res.statusCode, where).toBe(200);
          expect(res.json().result.content[0].text, where).toContain('STORE_UNAVAILABLE');
        } else {
          expect(res.statusCode, where).toBe(503);
          expect(res.headers['content-type'], where).toBe(PROBLEM);
          expect(res.json(), where).toEqual(
            unavailable(
              route.path === '/readyz'
                ? 'the store does not answer'
                : 'the store cannot be reached; try again later',
            ),
          );
        }
        seen.push(`${res.statusCode}`);
      }
    }
    expect(seen).not.toContain('500');
    expect(seen).not.toContain('401');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });

    cable.restore();
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      const res = await request(app, route, admin);
      expect(res.statusCode, `${key} after the outage: ${res.body.slice(0, 200)}`).toBe(before.get(key));
    }
  });
});
