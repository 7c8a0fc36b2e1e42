import {
  isPostgresUrl,
  MIGRATION_NAMES,
  migrate,
  openStore,
  pendingMigrations,
  type StoreDialect,
} from '../store/index.js';
import { storeExists, storeLocation } from './compose.js';

/**
 * What `ursa migrate` did (issue #23, decisions §5): the store (a file path, or a URL without its
 * password), its dialect, the migrations pending before it ran (in the order they apply) and those
 * it applied (none for a dry run, or when the store was up to date).
 */
export interface MigrationReport {
  readonly store: string;
  readonly dialect: StoreDialect;
  readonly dryRun: boolean;
  readonly pending: readonly string[];
  readonly applied: readonly string[];
}

/**
 * Applies the pending migrations of the store at `db` (a SQLite path, relative to `cwd`, or a
 * postgres:// URL), or with `dryRun` only lists them and changes nothing: a SQLite file that does
 * not exist yet is not created, and all migrations are pending for it. Every other opening of a
 * store migrates it too; this is for an operator who wants to see or do it first.
 *
 * @throws UrsaError `STORE_UNAVAILABLE` when the store cannot be opened or reached, or a migration
 *   fails (named in the message).
 */
export async function migrateStore(
  db: string,
  cwd: string,
  options: { dryRun: boolean },
): Promise<MigrationReport> {
  const location = storeLocation(db, cwd);
  const dialect: StoreDialect = isPostgresUrl(location) ? 'postgres' : 'sqlite';
  if (options.dryRun && !storeExists(location)) {
    return { store: location, dialect, dryRun: true, pending: MIGRATION_NAMES, applied: [] };
  }
  const store = await openStore(location, { migrate: false });
  try {
    const pending = await pendingMigrations(store);
    const applied = options.dryRun || pending.length === 0 ? [] : await migrate(store);
    return { store: store.location, dialect, dryRun: options.dryRun, pending, applied };
  } finally {
    await store.close();
  }
}
