import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { StoreDialect } from '../../src/store/open.js';

/** Every store test runs once per dialect, from one suite (as Kysely's own tests do). */
export const DIALECTS: readonly StoreDialect[] = ['sqlite', 'postgres'];

/** A fresh, empty database of `dialect`: a SQLite file in a new folder, or a new PostgreSQL database. */
export interface TestDatabase {
  readonly location: string;
  drop(): Promise<void>;
}

export async function freshDatabase(dialect: StoreDialect): Promise<TestDatabase> {
  if (process.env.URSA_TEST_PROJECT === 'unit') {
    throw new Error(
      'a unit test asked for a database: store tests belong to the integration project (vitest.config.ts)',
    );
  }
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'ursa-test-'));
    return {
      location: join(dir, 'ursa.db'),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const admin = inject('pgUrl');
  // Only the integration project's global setup provides it (vitest.config.ts).
  if (admin === undefined) throw new Error('no PostgreSQL is provided to this test (vitest.config.ts)');
  const name = `ursa_test_${randomBytes(6).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    location: url.toString(),
    drop: () =>
      withClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
