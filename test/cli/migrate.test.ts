import { existsSync } from 'node:fs';
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATION_NAMES, openStore, pendingMigrations, redactUrl } from '../../src/store/index.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import type { StoreDialect } from '../../src/store/open.js';
import { ursa } from '../support/cli.js';
import { DIALECTS, freshDatabase, type TestDatabase } from '../support/dialects.js';

// issue #23 item 7: `ursa migrate` applies the pending migrations and says which ran;
// `--dry-run` lists them and changes nothing; on SQLite and PostgreSQL.

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

const LAST = MIGRATION_NAMES[MIGRATION_NAMES.length - 1] as string;
const BEFORE_LAST = MIGRATION_NAMES[MIGRATION_NAMES.length - 2] as string;

/** A store migrated up to the one before the last: one migration pending. */
async function oneBehind(dialect: StoreDialect): Promise<string> {
  database = await freshDatabase(dialect);
  const store = await openStore(database.location, { migrate: false });
  try {
    const { error } = await new Migrator({ db: store.db, provider: migrationsFor(dialect) }).migrateTo(
      BEFORE_LAST,
    );
    expect(error).toBeUndefined();
  } finally {
    await store.close();
  }
  return database.location;
}

async function pendingOf(location: string): Promise<string[]> {
  const store = await openStore(location, { migrate: false });
  try {
    return await pendingMigrations(store);
  } finally {
    await store.close();
  }
}

describe.each(DIALECTS)('ursa migrate on %s', (dialect) => {
  it('--dry-run lists the pending migration and changes nothing', async () => {
    const db = await oneBehind(dialect);
    const run = await ursa(['migrate', '--db', db, '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`\\(${dialect}\\): 1 migration pending, nothing changed \\(dry run\\):\\n  ${LAST}\\n$`),
    );
    expect(await pendingOf(db)).toEqual([LAST]);
    const json = JSON.parse((await ursa(['migrate', '--db', db, '--dry-run', '--json'])).stdout);
    expect(json).toMatchObject({ dialect, dryRun: true, pending: [LAST], applied: [] });
    expect(json.store).toBe(dialect === 'sqlite' ? db : redactUrl(db));
  });

  it('applies the pending migration and says so; a second run finds nothing to do', async () => {
    const db = await oneBehind(dialect);
    const run = await ursa(['migrate', '--db', db, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      dialect,
      dryRun: false,
      pending: [LAST],
      applied: [LAST],
    });
    expect(await pendingOf(db)).toEqual([]);
    const again = await ursa(['migrate', '--db', db]);
    expect(again.stdout).toMatch(/ is up to date: no migration is pending\.\n$/);
  });
});

describe('ursa migrate on a SQLite file that does not exist yet', () => {
  it('--dry-run lists every migration and creates no file; without it, it creates the store', async () => {
    database = await freshDatabase('sqlite');
    const db = database.location;
    const dry = JSON.parse((await ursa(['migrate', '--db', db, '--dry-run', '--json'])).stdout);
    expect(dry).toEqual({
      store: db,
      dialect: 'sqlite',
      dryRun: true,
      pending: MIGRATION_NAMES,
      applied: [],
    });
    expect(existsSync(db)).toBe(false);
    const run = await ursa(['migrate', '--db', db]);
    expect(run.stdout).toContain(
      `${db} (sqlite): applied ${MIGRATION_NAMES.length} migrations:\n  0001-initial\n`,
    );
    expect(await pendingOf(db)).toEqual([]);
  });
});
