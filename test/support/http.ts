import type { FastifyInstance, HTTPMethods, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import type { StoreDialect, StoreOptions } from '../../src/store/open.js';
import type { Role } from '../../src/store/tokens.js';
import { type TestRuntime, testRuntime } from './runtime.js';

/** A valid scheduler document: a nightly noop at 03:00 UTC. */
export const SCHEDULER_YAML = 'description: nightly job\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';

/** A valid workflow document: one noop step. */
export const WORKFLOW_YAML = 'description: w\nsteps:\n  - name: one\n    recipe: noop\n';

/** The content type of every error answer (RFC 9457, decisions §7). */
export const PROBLEM = 'application/problem+json; charset=utf-8';

/** The problem body of a missing resource: the same for one of another tenant (decisions §6). */
export const NOT_FOUND = {
  type: 'https://ursa.dev/errors#not_found',
  title: 'NOT_FOUND',
  status: 404,
  code: 'NOT_FOUND',
  detail: 'no such resource',
};

/** The REST app over a fresh test runtime, with a token of each role for tenant `acme` and one of tenant `other`. */
export interface TestApp {
  readonly t: TestRuntime;
  readonly app: FastifyInstance;
  readonly tokens: Readonly<Record<Role | 'other' | 'operator', string>>;
  /** `Authorization` header for a token. */
  auth(token: string): { authorization: string };
  /** A request through inject() with `token` as bearer: a string payload is sent as is, an object as JSON. */
  request(
    method: HTTPMethods,
    url: string,
    token: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function testApp(
  dialect: StoreDialect = 'sqlite',
  start = '2026-06-01T08:00:00Z',
  options: { store?: StoreOptions } = {},
): Promise<TestApp> {
  const t = await testRuntime(start, { dialect, ...options });
  const now = t.clock.now();
  const make = async (tenant: string | null, role: Role, user: string) =>
    (await t.rt.repos.tokens.create({ tenant, role, user }, now)).secret;
  const tokens = {
    read: await make('acme', 'read', 'rita'),
    write: await make('acme', 'write', 'wes'),
    admin: await make('acme', 'admin', 'ada'),
    other: await make('other', 'admin', 'olga'),
    operator: await make(null, 'admin', 'root'),
  };
  const app = await buildApp({ rt: t.rt });
  await app.ready();
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  return {
    t,
    app,
    tokens,
    auth,
    request: (method, url, token, payload, headers = {}) =>
      app.inject({
        method,
        url,
        headers: { ...auth(token), ...headers },
        ...(payload === undefined ? {} : { payload: payload as string | object }),
      }),
    close: async () => {
      await app.close();
      await t.close();
    },
  };
}
