import { type Kysely, type KyselyConfig, Migrator } from 'kysely';
import { UrsaError } from '../errors/index.js';
import { storeUnavailable } from './errors.js';
import { migrationsFor } from './migrations/index.js';
import { isPostgresUrl, openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';

export { isPostgresUrl, redactUrl } from './postgres.js';

/** Which database a store runs on. */
export type StoreDialect = 'sqlite' | 'postgres';

/**
 * Ursa's store: a Kysely instance over the tables of `schema.ts`, on one of the supported
 * dialects. Everything above this port writes its queries once, through Kysely.
 */
export interface Store {
  readonly db: Kysely<Database>;
  /**
   * Where worker leases are renewed (decisions §5): on PostgreSQL a connection of its own, so that
   * a renewal never waits behind a busy worker's queue of statements for the shared pool and its
   * lease does not lapse while it is alive (issue #11: with four saturated workers, renewals waited
   * over 4 s of a 5 s lease); on SQLite `db`, the one connection there is.
   */
  readonly leaseDb: Kysely<Database>;
  readonly dialect: StoreDialect;
  /** Where the data lives: a file path, or a URL without its password. */
  readonly location: string;
  /** Tells every worker of this store that schedule state changed (PostgreSQL NOTIFY; in-process on SQLite). */
  notifyChange(): Promise<void>;
  /**
   * Moves the write-ahead log into the database file now, without waiting for readers (SQLite;
   * nothing on PostgreSQL). The worker calls it between occurrences, so that the copy does not
   * fall into a start transaction, as an automatic checkpoint at commit would.
   */
  checkpoint(): Promise<void>;
  /**
   * Writes an online, consistent backup of the store into the new file `file` through this
   * store's own connection (SQLite's backup API: the store keeps serving, and a writer meanwhile
   * is seen whole or not at all), owner-only. SQLite only.
   *
   * @throws UrsaError `BACKUP_UNSUPPORTED` on PostgreSQL (pg_dump backs it up);
   *   `ARGUMENT_INVALID` when `file` exists already; `STORE_UNAVAILABLE` when it cannot be written.
   */
  backup(file: string): Promise<void>;
  /** Calls `onChange` whenever any worker calls {@link notifyChange}; resolves to an unsubscribe function. */
  onChange(onChange: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The driver's error code (`ECONNREFUSED`, `28P01`) of an error or of the driver error it translates. */
function driverCode(error: unknown): string | undefined {
  const driver = error instanceof UrsaError ? error.cause : error;
  const code = (driver as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function migratorOf(store: Store): Migrator {
  return new Migrator({ db: store.db, provider: migrationsFor(store.dialect) });
}

/**
 * The names of the migrations not yet applied to `store`, in the order they apply (`ursa migrate
 * --dry-run`, issue #23). Reads only: a store never migrated has no migration table, and all are
 * pending.
 *
 * @throws the store's errors (`STORE_UNAVAILABLE` when it cannot be reached).
 */
export async function pendingMigrations(store: Store): Promise<string[]> {
  const migrations = await migratorOf(store).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Applies every pending migration (decisions §5: the same schema on every dialect) and returns the
 * names of those it applied, in order (none when the store was up to date).
 *
 * @throws UrsaError `STORE_UNAVAILABLE` naming the migration that failed.
 */
export async function migrate(store: Store): Promise<string[]> {
  const { error, results } = await migratorOf(store).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'a migration';
    const code = driverCode(error);
    throw storeUnavailable(
      store.location,
      `${failed} failed${code === undefined ? '' : ` (${code})`}`,
      error,
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** How a store is opened. */
export interface StoreOptions {
  /**
   * SQLite: how long in all, milliseconds, a statement waits for a write lock another connection
   * holds (a backup, the sqlite3 shell, a local `ursa` command) before it fails with `STORE_BUSY`;
   * beyond the first 50 ms the wait is asynchronous, so the event loop keeps running. Default
   * {@link DEFAULT_SQLITE_BUSY_TIMEOUT_MS}. PostgreSQL waits for its locks itself.
   */
  readonly busyTimeoutMs?: number;
  /**
   * Called with each statement once executed: its SQL text, bound parameters and duration in
   * milliseconds (Kysely's query log). For diagnosis and for tests that check how a statement is
   * planned.
   */
  readonly onQuery?: (sql: string, parameters: readonly unknown[], durationMs: number) => void;
  /**
   * Whether opening applies the pending migrations (default true). False only for `ursa migrate`,
   * which reports them itself; a store left behind is not for anything else to use.
   */
  readonly migrate?: boolean;
}

/** The Kysely settings of {@link StoreOptions.onQuery}: its query log, when one is asked for. */
function queryLog({ onQuery }: StoreOptions): Pick<KyselyConfig, 'log'> {
  if (onQuery === undefined) return {};
  return {
    log: (event) => {
      if (event.level === 'query')
        onQuery(event.query.sql, event.query.parameters, event.queryDurationMillis);
    },
  };
}

/** The default of {@link StoreOptions.busyTimeoutMs}, milliseconds. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 30_000;

/**
 * Opens the store at `location` — a SQLite file path, or a `postgres://` URL — and brings its
 * schema up to date. Later failures of its queries: `STORE_BUSY` and `STORE_FULL` (SQLite, see
 * {@link StoreOptions}); a server that went away, refuses or cannot serve (and a SQLite file that
 * cannot be read) is `STORE_UNAVAILABLE` for that query, with the driver's error as its `cause`;
 * the pool connects again on the next one.
 *
 * @throws UrsaError `STORE_UNAVAILABLE` when the database cannot be opened, reached or migrated
 *   (the message names the location without its password, never the driver's text).
 */
export async function openStore(location: string, options: StoreOptions = {}): Promise<Store> {
  const store = isPostgresUrl(location)
    ? openPostgres(location, queryLog(options))
    : openSqlite(location, options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS, queryLog(options));
  try {
    if (options.migrate !== false) await migrate(store);
    // Unmigrated, the store is still reached here, so a bad location or password fails in open.
    else await pendingMigrations(store);
  } catch (error) {
    await store.close().catch(() => {});
    // Ursa's own refusals as they are; a lost connection's translation names the location here.
    if (error instanceof UrsaError && (error.code !== 'STORE_UNAVAILABLE' || error.cause === undefined))
      throw error;
    const code = driverCode(error);
    throw storeUnavailable(
      store.location,
      `cannot reach the database${code === undefined ? '' : ` (${code})`}`,
      error,
    );
  }
  return store;
}
