import { compileErrors, validate } from '@readme/openapi-parser';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { type TestApp, testApp } from '../support/http.js';
import { registeredRoutes } from '../support/routes.js';

// `/healthz`, `/readyz`, `/metrics`, `/openapi.json` and `/docs` (issue #7) through inject().

const YAML = 'description: nightly job\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';

let a: TestApp | undefined;
const extra: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of extra.splice(0)) await app.close();
  await a?.close();
  a = undefined;
});

describe('/healthz and /readyz', () => {
  it('/healthz answers ok without a token', async () => {
    a = await testApp();
    const res = await a.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz says the store answers, and whether the loop runs; 503 problem when it does not', async () => {
    a = await testApp();
    const plain = await a.app.inject({ method: 'GET', url: '/readyz' });
    expect(plain.statusCode).toBe(200);
    expect(plain.json()).toEqual({ status: 'ready', store: 'sqlite', loop: false });

    let running = true;
    const app = await buildApp({ rt: a.t.rt, loopRunning: () => running });
    extra.push(app);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      status: 'ready',
      store: 'sqlite',
      loop: true,
    });
    running = false;
    const down = await app.inject({ method: 'GET', url: '/readyz' });
    expect(down.statusCode).toBe(503);
    expect(down.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(down.json()).toEqual({
      type: 'https://ursa.dev/errors#store_unavailable',
      title: 'STORE_UNAVAILABLE',
      status: 503,
      code: 'STORE_UNAVAILABLE',
      detail: 'the scheduling loop is not running',
    });
  });

  it('an unknown path answers the uniform 404 problem', async () => {
    a = await testApp();
    const res = await a.app.inject({ method: 'GET', url: '/brain/acme/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#not_found',
      title: 'NOT_FOUND',
      status: 404,
      code: 'NOT_FOUND',
      detail: 'no such resource',
    });
  });
});

describe('/metrics (Prometheus, issue #7)', () => {
  it('serves the runtime registry: runs by outcome and trigger, lateness, ticks', async () => {
    a = await testApp();
    const rt = { ...a.t.rt, metrics: new Metrics() };
    const app = await buildApp({ rt });
    extra.push(app);
    const auth = a.auth(a.tokens.write);
    const put = await app.inject({
      method: 'PUT',
      url: '/brain/acme/project/ops/scheduler/job',
      headers: auth,
      payload: { yaml: YAML },
    });
    expect(put.statusCode).toBe(201);
    const worker = a.t.worker(undefined, rt);
    await worker.bootstrap();
    await worker.tick();
    a.t.clock.set(Date.parse('2026-06-01T08:00:02Z'));
    const fire = await app.inject({
      method: 'POST',
      url: '/brain/acme/project/ops/scheduler/job/fire',
      headers: auth,
    });
    expect(fire.statusCode).toBe(202);
    await worker.reap();
    await worker.executor.settled();

    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.body;
    expect(text).toContain('# TYPE ursa_runs_total counter\n');
    expect(text).toContain('ursa_runs_total{outcome="completed",trigger="manual"} 1\n');
    expect(text).toContain('# TYPE ursa_fire_lateness_seconds histogram\n');
    expect(text).toContain('ursa_fire_lateness_seconds_count{trigger="manual"} 1\n');
    expect(text).toContain('ursa_fire_lateness_seconds_bucket{le="0.001",trigger="manual"} 1\n');
    expect(text).toContain('ursa_ticks_total 1\n');
    expect(text).toContain('# TYPE ursa_tick_occurrences_total counter\n');
    expect(text).toContain('ursa_processes_running 0\n');
    expect(text).toContain('ursa_store_errors_total 0\n');
  });

  it('answers an empty text without a Metrics instance (CLI runtimes)', async () => {
    a = await testApp();
    const res = await a.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain');
    expect(res.body).toBe('');
  });
});

describe('/openapi.json and /docs', () => {
  const HIDDEN = /^GET (\/openapi\.json|\/metrics|\/docs(\/.*)?)$/;

  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser) with every route, each with tags and a summary', async () => {
    a = await testApp();
    const res = await a.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      openapi: string;
      paths: Record<string, Record<string, { tags?: string[]; summary?: string; responses?: object }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
    // The validator does check: a path parameter left out of an operation is an error.
    const broken = structuredClone(doc) as {
      paths: Record<string, Record<string, { parameters?: unknown[] }>>;
    };
    const inbox = broken.paths['/brain/{tenant}/inbox']?.get;
    if (inbox !== undefined) inbox.parameters = [];
    expect((await validate(broken as never)).valid).toBe(false);

    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const routes = registeredRoutes(a.app).filter((r) => !HIDDEN.test(r));
    expect(documented).toEqual(routes);
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /healthz',
        'GET /readyz',
        'GET /brain/{tenant}/project/{project}/scheduler',
        'GET /brain/{tenant}/project/{project}/scheduler/{name}',
        'PUT /brain/{tenant}/project/{project}/scheduler/{name}',
        'DELETE /brain/{tenant}/project/{project}/scheduler/{name}',
        'POST /brain/{tenant}/project/{project}/scheduler/refresh',
        'POST /brain/{tenant}/project/{project}/scheduler/{name}/fire',
        'GET /brain/{tenant}/project/{project}/scheduler/{name}/events',
        'GET /brain/{tenant}/project/{project}/scheduler/{name}/runs',
        'GET /brain/{tenant}/project/{project}/runs/{correlationId}',
        'GET /brain/{tenant}/project/{project}/documents',
        'GET /brain/{tenant}/project/{project}/documents/{*}',
        'GET /brain/{tenant}/project/{project}/processes/{id}',
        'POST /brain/{tenant}/project/{project}/processes/{id}/stop',
        'GET /brain/{tenant}/inbox',
        'POST /brain/{tenant}/inbox/read',
        'POST /brain/{tenant}/scheduler/refresh',
      ]),
    );
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.tags?.length, `${method} ${path} tags`).toBeGreaterThan(0);
        expect(op.summary, `${method} ${path} summary`).toMatch(/\S/);
      }
    }
    // Tenant routes document their errors; fire documents its 202.
    const brain = Object.entries(doc.paths).filter(([path]) => path.startsWith('/brain/'));
    for (const [path, ops] of brain) {
      for (const [method, op] of Object.entries(ops)) {
        expect(Object.keys(op.responses ?? {}), `${method} ${path}`).toEqual(
          expect.arrayContaining(['400', '401', '403', '404']),
        );
      }
    }
    expect(
      Object.keys(
        doc.paths['/brain/{tenant}/project/{project}/scheduler/{name}/fire']?.post?.responses ?? {},
      ),
    ).toContain('202');
  });

  it('serves the rendered reference at /docs', async () => {
    a = await testApp();
    const res = await a.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});
