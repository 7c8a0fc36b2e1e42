import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../support/http.js';
import { snapshot } from '../support/snapshot.js';

// Property tests of the REST API (issue #12) through Fastify's inject(): random JSON and non-JSON
// bodies, content types, path segments and queries to the endpoints that take input. Every answer
// must be a status the served OpenAPI document lists for that operation, errors must be
// `application/problem+json` (RFC 9457, decisions §7) with a stable code, never a 5xx, and a
// refused request changes nothing in the store (decisions §6).

const P = '/brain/{tenant}/project/{project}';

interface Endpoint {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** The OpenAPI path template. */
  readonly template: string;
  readonly query?: readonly string[];
}

const ENDPOINTS: readonly Endpoint[] = [
  { method: 'PUT', template: `${P}/scheduler/{name}` },
  { method: 'POST', template: `${P}/scheduler/{name}/fire` },
  { method: 'POST', template: `${P}/scheduler/refresh` },
  { method: 'DELETE', template: `${P}/scheduler/{name}` },
  { method: 'GET', template: `${P}/scheduler/{name}`, query: [] },
  { method: 'GET', template: `${P}/scheduler/{name}/events`, query: ['limit', 'before'] },
  { method: 'GET', template: `${P}/scheduler/{name}/runs`, query: ['limit', 'before'] },
  { method: 'POST', template: `${P}/workflows/{name}/runs` },
  { method: 'PUT', template: `${P}/recipes/{name}` },
  { method: 'DELETE', template: `${P}/recipes/{name}` },
  {
    method: 'GET',
    template: `${P}/feed`,
    query: ['limit', 'before', 'scheduler', 'kind', 'correlationId', 'since', 'until'],
  },
  { method: 'POST', template: `${P}/processes/{id}/stop` },
  { method: 'POST', template: '/brain/{tenant}/inbox/read' },
];

const VALID_YAML = 'description: nightly job\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=utf-16le',
  'application/yaml',
  'text/yaml',
  'application/x-yaml',
  'text/plain',
  'text/plain; charset=latin1',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/problem+json',
  'garbage',
  '',
];

interface Body {
  readonly payload?: string | Buffer;
  readonly contentType?: string;
}

/** JSON values, non-JSON text and bytes under any content type, valid documents, and limits. */
const body: fc.Arbitrary<Body> = fc.oneof(
  fc.constant<Body>({}),
  fc
    .jsonValue({ maxDepth: 4 })
    .map((v): Body => ({ payload: JSON.stringify(v), contentType: 'application/json' })),
  fc
    .record({
      params: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    })
    .map((v): Body => ({ payload: JSON.stringify(v), contentType: 'application/json' })),
  fc
    .record(
      {
        ids: fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), { maxLength: 3 }),
        user: fc.string({ maxLength: 6 }),
      },
      { requiredKeys: [] },
    )
    .map((v): Body => ({ payload: JSON.stringify(v), contentType: 'application/json' })),
  fc
    .tuple(fc.string({ maxLength: 200 }), fc.constantFrom(...CONTENT_TYPES))
    .map(([payload, contentType]): Body => ({ payload, contentType })),
  fc
    .tuple(fc.uint8Array({ maxLength: 200 }), fc.constantFrom(...CONTENT_TYPES))
    .map(([bytes, contentType]): Body => ({ payload: Buffer.from(bytes), contentType })),
  fc
    .tuple(fc.constantFrom(VALID_YAML, `${VALID_YAML}extra: 1\n`, 'description: x\n'), fc.boolean())
    .map(
      ([yaml, wrapped]): Body =>
        wrapped
          ? { payload: JSON.stringify({ yaml }), contentType: 'application/json' }
          : { payload: yaml, contentType: 'application/yaml' },
    ),
  fc.constantFrom<Body>(
    { payload: 'x'.repeat(65_537), contentType: 'application/yaml' },
    { payload: `description: "${'x'.repeat(300_000)}"`, contentType: 'application/yaml' },
    { payload: '{"yaml":', contentType: 'application/json' },
    { payload: '{"__proto__": {"admin": true}}', contentType: 'application/json' },
    { payload: '{"constructor": {"prototype": {"x": 1}}}', contentType: 'application/json' },
  ),
);

/** Path segments: the fixture's names, valid unknown ones, and anything, percent-encoded or raw. */
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('job', 'new1', 'a.b-c_d') },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }).map(encodeURIComponent) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('%', '%E0%A4%A', '..', '%2e%2e', '%00', 'x'.repeat(200), '_tenant'),
  },
);

const query = (names: readonly string[]) =>
  fc
    .array(
      fc.tuple(
        fc.constantFrom(...names, 'extra'),
        fc.oneof(
          fc.integer({ min: -5, max: 2000 }).map(String),
          fc.string({ maxLength: 8 }),
          fc.constant('1e3'),
        ),
      ),
      { maxLength: 3 },
    )
    .map((pairs) =>
      pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`,
    );

type Who = 'read' | 'write' | 'admin' | 'other' | 'none' | 'bogus';

interface Request {
  readonly endpoint: Endpoint;
  readonly tenant: string;
  readonly name: string;
  readonly query: string;
  readonly body: Body;
  readonly who: Who;
}

const request: fc.Arbitrary<Request> = fc.constantFrom(...ENDPOINTS).chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    tenant: fc.oneof({ weight: 5, arbitrary: fc.constant('acme') }, { weight: 1, arbitrary: segment }),
    name: segment,
    query: query(endpoint.query ?? ['x']),
    body,
    who: fc.constantFrom<Who>('write', 'write', 'admin', 'read', 'other', 'none', 'bogus'),
  }),
);

describe('REST bodies through inject() (decisions §6, §7)', () => {
  let a: TestApp;
  let openapi: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

  beforeAll(async () => {
    a = await testApp('sqlite');
    openapi = (await a.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const put = await a.app.inject({
      method: 'PUT',
      url: '/brain/acme/project/ops/scheduler/job',
      headers: { ...a.auth(a.tokens.write), 'content-type': 'application/yaml' },
      payload: VALID_YAML,
    });
    expect(put.statusCode).toBe(201);
  });
  afterAll(async () => {
    await a.close();
  });

  function documented(endpoint: Endpoint): string[] {
    const operation = openapi.paths[endpoint.template]?.[endpoint.method.toLowerCase()];
    if (operation === undefined)
      throw new Error(`${endpoint.method} ${endpoint.template} is not in /openapi.json`);
    return Object.keys(operation.responses);
  }

  it('decisions §7: every endpoint under test is in the served OpenAPI document with its error statuses', () => {
    for (const endpoint of ENDPOINTS)
      expect(documented(endpoint)).toEqual(expect.arrayContaining(['400', '401', '404']));
  });

  it('decisions §6, §7: any body, content type, path and query gets a documented status, problem+json on errors, never a 5xx, and a refusal writes nothing', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const token = r.who === 'none' ? undefined : r.who === 'bogus' ? 'ursa_not-a-token' : a.tokens[r.who];
        const url =
          r.endpoint.template
            .replace('{tenant}', r.tenant)
            .replace('{project}', 'ops')
            .replace('{name}', r.name)
            .replace('{id}', r.name) + r.query;
        const headers: Record<string, string> = token === undefined ? {} : a.auth(token);
        if (r.body.contentType !== undefined) headers['content-type'] = r.body.contentType;
        const before = await snapshot(a.t.store);
        const res = await a.app.inject({
          method: r.endpoint.method,
          url,
          headers,
          ...(r.body.payload === undefined ? {} : { payload: r.body.payload }),
        });
        seen.add(res.statusCode);
        const where = `${r.endpoint.method} ${url} (${r.body.contentType ?? 'no body'}) → ${res.statusCode} ${res.body.slice(0, 300)}`;
        expect(res.statusCode, where).toBeLessThan(500);
        expect(documented(r.endpoint), where).toContain(String(res.statusCode));
        if (res.statusCode < 400) {
          expect(res.headers['content-type'], where).toMatch(/^application\/json/);
          return;
        }
        expect(res.headers['content-type'], where).toMatch(/^application\/problem\+json/);
        const problem = res.json();
        expect(problem, where).toMatchObject({
          type: expect.stringMatching(/^https:\/\/ursa\.dev\/errors#[a-z_]+$/),
          title: expect.stringMatching(/^[A-Z_]+$/),
          code: expect.stringMatching(/^[A-Z_]+$/),
          status: res.statusCode,
          detail: expect.any(String),
        });
        for (const issue of problem.errors ?? []) {
          expect(typeof issue.path, where).toBe('string');
          expect(typeof issue.message, where).toBe('string');
        }
        expect(await snapshot(a.t.store), where).toEqual(before);
      }),
      { numRuns: 300 },
    );
    // The run reached successes and several kinds of refusal, not just one.
    expect([...seen].filter((s) => s < 300).length).toBeGreaterThan(0);
    expect([...seen].filter((s) => s >= 400).length).toBeGreaterThanOrEqual(3);
  });
});
