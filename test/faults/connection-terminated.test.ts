import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';

let database: TestDatabase | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  await database?.drop();
  store = database = undefined;
});

/** Ends every other connection to the database of `url` (as `pg_terminate_backend` by an operator, or a failover). */
async function terminateOthers(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return result.rowCount ?? 0;
  } finally {
    await client.end();
  }
}

// issue #12 (found by `npm run soak -- --store postgres`): a pooled connection the server ends while
// a transaction holds it emitted 'error' with no listener, and the worker process died.
describe('a PostgreSQL connection terminated while checked out', () => {
  it('fails the transaction that held it, not the process; the store then works again', {
    timeout: 30_000,
  }, async () => {
    database = await freshDatabase('postgres');
    store = await openStore(database.location);
    let resume: () => void = () => {};
    const paused = new Promise<void>((resolve) => {
      resume = resolve;
    });
    let holding: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const transaction = store.db.transaction().execute(async (trx) => {
      await trx.selectFrom('runs').select('name').execute();
      holding();
      await paused; // the connection is checked out and idle in the transaction
      await trx.selectFrom('runs').select('name').execute();
    });
    await held;
    expect(await terminateOthers(database.location)).toBeGreaterThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the server's FATAL reaches the client
    resume();
    await expect(transaction).rejects.toThrow();
    expect(await store.db.selectFrom('runs').select('name').execute()).toEqual([]);
  });
});
