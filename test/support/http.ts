import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import type { StoreDialect } from '../../src/store/open.js';
import type { Role } from '../../src/store/tokens.js';
import { type TestRuntime, testRuntime } from './runtime.js';

/** The REST app over a fresh test runtime, with a token of each role for tenant `acme` and one of tenant `other`. */
export interface TestApp {
  readonly t: TestRuntime;
  readonly app: FastifyInstance;
  readonly tokens: Readonly<Record<Role | 'other' | 'operator', string>>;
  /** `Authorization` header for a token. */
  auth(token: string): { authorization: string };
  close(): Promise<void>;
}

export async function testApp(
  dialect: StoreDialect = 'sqlite',
  start = '2026-06-01T08:00:00Z',
): Promise<TestApp> {
  const t = await testRuntime(start, { dialect });
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
  return {
    t,
    app,
    tokens,
    auth: (token) => ({ authorization: `Bearer ${token}` }),
    close: async () => {
      await app.close();
      await t.close();
    },
  };
}
