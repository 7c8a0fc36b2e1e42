import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { UrsaError } from '../errors/index.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

/** Which database a store runs on. */
export type StoreDialect = 'sqlite' | 'postgres';

/**
 * Ursa's store: a Kysely instance over the tables of `schema.ts`, on one of the supported
 * dialects. Everything above this port writes its queries once, through Kysely.
 */
export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: StoreDialect;
  /** Where the data lives: a file path, or a URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

function openSqlite(path: string): Store {
  const file = resolve(path);
  let database: SQLite.Database;
  try {
    mkdirSync(dirname(file), { recursive: true });
    database = new SQLite(file);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('busy_timeout = 5000');
  } catch (error) {
    throw new UrsaError(
      'STORE_UNAVAILABLE',
      `store: cannot open the SQLite file ${file}: ${(error as Error).message}`,
      {
        field: 'db',
        value: path,
      },
    );
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return { db, dialect: 'sqlite', location: file, close: () => db.destroy() };
}

/** Applies every pending migration (decisions §5: the same schema on every dialect). */
export async function migrate(store: Store): Promise<void> {
  const { error, results } = await new Migrator({ db: store.db, provider: migrations }).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new UrsaError(
      'STORE_UNAVAILABLE',
      `store: migration ${failed} failed: ${(error as Error).message}`,
      {
        field: 'db',
        value: store.location,
      },
    );
  }
}

/**
 * Opens the store at `location` (a SQLite file path; PostgreSQL URLs come with the PostgreSQL
 * dialect) and brings its schema up to date.
 *
 * @throws UrsaError `STORE_UNAVAILABLE` when the database cannot be opened or migrated.
 */
export async function openStore(location: string): Promise<Store> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    throw new UrsaError(
      'STORE_UNAVAILABLE',
      'store: PostgreSQL is not supported yet; use a SQLite file path',
      {
        field: 'db',
        value: location.replace(/:[^:@/]*@/, ':***@'),
      },
    );
  }
  const store = openSqlite(location);
  try {
    await migrate(store);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
