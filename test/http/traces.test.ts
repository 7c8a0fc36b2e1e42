import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { sdkTracing, type Tracing } from '../../src/app/otel-sdk.js';
import { buildApp } from '../../src/http/app.js';
import { type TestApp, testApp } from '../support/http.js';

// Issue #26 item 3: a span per REST request, named by its route's pattern; no token, path value,
// query value or body in it.

let a: TestApp | undefined;
let app: FastifyInstance | undefined;
let tracing: Tracing | undefined;
afterEach(async () => {
  await app?.close();
  await tracing?.shutdown();
  await a?.close();
  [a, app, tracing] = [undefined, undefined, undefined];
});

describe('spans of REST requests (issue #26 item 3)', () => {
  it('names each request by its method and route pattern and records only method, route and status', async () => {
    a = await testApp();
    const exporter = new InMemorySpanExporter();
    tracing = sdkTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    app = await buildApp({ rt: { ...a.t.rt, tracer: tracing.tracer } });
    const token = a.tokens.admin;
    const path = '/brain/acme/project/ops/scheduler/nightly-secret-name';
    const secretYaml = 'description: the-body-secret\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';
    const put = await app.inject({
      method: 'PUT',
      url: `${path}?note=query-secret`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/yaml' },
      payload: secretYaml,
    });
    expect(put.statusCode).toBe(201);
    const refused = await app.inject({ method: 'GET', url: path });
    expect(refused.statusCode).toBe(401);
    const missing = await app.inject({ method: 'GET', url: '/nothing/here' });
    expect(missing.statusCode).toBe(404);

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => [s.name, s.kind, s.attributes, s.status.code])).toEqual([
      [
        'PUT /brain/:tenant/project/:project/scheduler/:name',
        1,
        {
          'http.request.method': 'PUT',
          'http.route': '/brain/:tenant/project/:project/scheduler/:name',
          'http.response.status_code': 201,
        },
        0,
      ],
      [
        'GET /brain/:tenant/project/:project/scheduler/:name',
        1,
        {
          'http.request.method': 'GET',
          'http.route': '/brain/:tenant/project/:project/scheduler/:name',
          'http.response.status_code': 401,
        },
        0,
      ],
      ['GET', 1, { 'http.request.method': 'GET', 'http.response.status_code': 404 }, 0],
    ]);
    const recorded = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status]));
    for (const secret of [token, 'nightly-secret-name', 'query-secret', 'the-body-secret'])
      expect(recorded).not.toContain(secret);
  });
});
