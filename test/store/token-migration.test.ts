import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { migrate, openStore, type Store } from '../../src/store/open.js';
import { hashToken, Tokens } from '../../src/store/tokens.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// Issue #19: migration 0009-token-scope on a store that already holds tokens, on both dialects —
// a token made before it keeps working, unscoped, without an expiry, never used.

describe.each(DIALECTS)('migration 0009-token-scope on %s (issue #19)', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it('keeps a token made before it working, unscoped and without an expiry; down and up again', async () => {
    database = await freshDatabase(dialect);
    store = await openStore(database.location);
    const migrator = new Migrator({ db: store.db, provider: migrationsFor(store.dialect) });
    const down = await migrator.migrateTo('0008-run-lock-mode');
    expect(down.error).toBeUndefined();
    // Later migrations are rolled back first; 0009 last, each successfully.
    expect(down.results?.at(-1)).toMatchObject({ migrationName: '0009-token-scope', direction: 'Down' });
    expect(down.results?.every((r) => r.direction === 'Down' && r.status === 'Success')).toBe(true);
    // A row as 0005-tokens left it: none of the new columns exist yet.
    await store.db
      .insertInto('tokens')
      .values({
        id: 'tok_000000000001',
        tenant: 'acme',
        role: 'write',
        user_name: 'wes',
        label: null,
        hash: hashToken('ursa_before'),
        created_at: 1_000,
        revoked_at: null,
      } as never)
      .execute();
    await migrate(store);
    const tokens = new Tokens(store);
    expect(await tokens.check('ursa_before', 2_000)).toEqual({
      state: 'live',
      token: {
        id: 'tok_000000000001',
        tenant: 'acme',
        project: null,
        role: 'write',
        user: 'wes',
        label: null,
        createdAt: 1_000,
        revokedAt: null,
        expiresAt: null,
        lastUsedAt: null,
      },
    });
  });
});
