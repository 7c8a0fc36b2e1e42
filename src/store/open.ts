import { EventEmitter } from 'node:events';
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyConfig,
  Migrator,
  PostgresDialect,
  type QueryCompiler,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { InfrastructureError, UrsaError } from '../errors/index.js';
import { NOT_SERVING, translateStoreError } from './errors.js';
import { migrationsFor } from './migrations/index.js';
import type { Database } from './schema.js';

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
  /** Calls `onChange` whenever any worker calls {@link notifyChange}; resolves to an unsubscribe function. */
  onChange(onChange: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const CHANNEL = 'ursa_schedule_changed';
const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** True when `location` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return POSTGRES_URL.test(location);
}

/** A URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/** `STORE_UNAVAILABLE` naming the store; `cause` (the driver's error) is for the server log only. */
function unavailable(location: string, reason: string, cause?: unknown): InfrastructureError {
  return new InfrastructureError('STORE_UNAVAILABLE', `store: ${location}: ${reason}`, {
    field: 'db',
    value: location,
    cause: cause instanceof UrsaError ? (cause.cause ?? cause) : cause,
  });
}

/**
 * SQLite transactions that take the write lock when they begin (`begin immediate`): a deferred
 * transaction that reads first and then writes fails at once with SQLITE_BUSY when another
 * connection wrote meanwhile, whereas waiting for the lock at `begin` honours busy_timeout.
 * Every Ursa transaction writes, so nothing is lost by locking early.
 *
 * Its connection also waits out another connection's write lock (a backup, the sqlite3 shell, a
 * local `ursa` command) and translates the driver's faults (issue #12): see {@link GuardedSqliteConnection}.
 * A rollback after SQLite already rolled the transaction back itself (SQLITE_FULL does) is a no-op,
 * so the original error reaches the caller instead of "cannot rollback - no transaction is active".
 */
class ImmediateSqliteDriver extends SqliteDriver {
  #guarded: GuardedSqliteConnection | undefined;

  constructor(
    config: SqliteDialectConfig,
    private readonly guard: SqliteGuard,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    if (this.#guarded?.inner !== connection)
      this.#guarded = new GuardedSqliteConnection(connection, this.guard);
    return this.#guarded;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.guard.database.inTransaction) await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(
    config: SqliteDialectConfig,
    private readonly guard: SqliteGuard,
  ) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.guard);
  }
}

/** What the SQLite connection guard needs: the raw database, its file and the busy budget. */
interface SqliteGuard {
  readonly database: SQLite.Database;
  readonly file: string;
  readonly busyTimeoutMs: number;
}

/** How long one SQLite statement blocks the event loop waiting for a lock (busy_timeout), milliseconds. */
const SQLITE_BUSY_SLICE_MS = 50;
/** The longest pause between two attempts of a statement blocked by another connection, milliseconds. */
const SQLITE_BUSY_PAUSE_MAX_MS = 250;

/**
 * The one SQLite connection with the store's fault handling (issue #12):
 *
 * - A statement outside a transaction (or the `begin immediate` of one) that finds another
 *   connection holding the write lock (SQLITE_BUSY) is retried: each attempt blocks at most
 *   {@link SQLITE_BUSY_SLICE_MS} (busy_timeout), and between attempts the event loop runs (timers,
 *   engines, the heartbeat), until `busyTimeoutMs` in all; then `STORE_BUSY`. Nothing was written
 *   by a busy attempt, so a retry never doubles a write. Inside a transaction Ursa already holds
 *   the write lock, so a busy statement there fails the transaction, which rolls back whole.
 * - A full disk (SQLITE_FULL: the file or its write-ahead log cannot grow) is `STORE_FULL`; SQLite
 *   has rolled back the statement's transaction, so the store holds what it held before.
 * - A file that cannot be opened, read or written any more (SQLITE_CANTOPEN, SQLITE_IOERR,
 *   SQLITE_NOTADB) is `STORE_UNAVAILABLE` (issue #19), see `translateStoreError`.
 */
class GuardedSqliteConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly guard: SqliteGuard,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code !== 'string') throw error;
        if (code.startsWith('SQLITE_BUSY')) {
          waited += SQLITE_BUSY_SLICE_MS;
          if (this.guard.database.inTransaction || waited >= this.guard.busyTimeoutMs)
            throw busy(this.guard, code);
          const pause = Math.min(5 * 2 ** attempt, SQLITE_BUSY_PAUSE_MAX_MS);
          waited += pause;
          await new Promise((resolve) => setTimeout(resolve, pause));
          continue;
        }
        if (code === 'SQLITE_FULL') throw full(this.guard, code);
        if (code === 'SQLITE_CONSTRAINT_TRIGGER' && (error as Error).message === NOT_SERVING)
          throw notServing(this.guard);
        throw translateStoreError(error);
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

function busy(guard: SqliteGuard, code: string): InfrastructureError {
  return new InfrastructureError(
    'STORE_BUSY',
    `store: another connection held the write lock for more than ${guard.busyTimeoutMs} ms (${code}); nothing was written — Ursa retries on its next pass`,
    { field: 'db', value: guard.file },
  );
}

function full(guard: SqliteGuard, code: string): InfrastructureError {
  return new InfrastructureError(
    'STORE_FULL',
    `store: the disk of the SQLite store is full (${code}); the write was rolled back whole — free space and Ursa goes on where it stopped`,
    { field: 'db', value: guard.file },
  );
}

function notServing(guard: SqliteGuard): InfrastructureError {
  return new InfrastructureError(
    'STORE_LOCKED',
    `store: this process no longer serves the store — another process took it over after this one's lease lapsed; nothing was written`,
    { field: 'db', value: guard.file },
  );
}

/** Owner-only modes of what Ursa creates for a SQLite store (issue #19): its folders and files. */
const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Creates the folders of `file` that are missing, and the file itself when it is missing, owner
 * only whatever the umask: SQLite gives the write-ahead log and shared-memory file the mode of
 * the database file, so those are owner-only too. What exists already keeps its mode.
 */
function createOwnerOnly(file: string): void {
  const folder = dirname(file);
  const first = mkdirSync(folder, { recursive: true, mode: FOLDER_MODE });
  if (first !== undefined) {
    for (let path = folder; ; path = dirname(path)) {
      chmodSync(path, FOLDER_MODE);
      if (path === first) break;
    }
  }
  let fd: number;
  try {
    fd = openSync(file, 'wx', FILE_MODE);
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return;
    throw error;
  }
  try {
    fchmodSync(fd, FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses a database file with more than one name (hard link): SQLite names its write-ahead log
 * and shared-memory file after the path, so processes opening one file under two names would not
 * see each other's writes or locks — the serving process's lease included — and would corrupt it.
 */
function refuseHardLinks(file: string, links: number): void {
  if (links > 1) {
    throw new InfrastructureError(
      'STORE_UNAVAILABLE',
      `store: ${file}: the database file has ${links} names (hard links); SQLite coordinates processes by the file's name, so opening it under another would corrupt it — remove the other links (find / -samefile ${file})`,
      { field: 'db', value: file },
    );
  }
}

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements kept by SQL text (the
 * `capacity` most recently used): Kysely prepares every query it runs, and preparing the
 * multi-row statements of a due second's batch cost more than running them (issue #11). Safe
 * because the driver runs one query at a time on its one connection and never streams here.
 */
function withStatementCache(database: SQLite.Database, capacity = 256): SqliteDialectConfig['database'] {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = database.prepare(sql);
        if (statements.size >= capacity) statements.delete(statements.keys().next().value as string);
      } else statements.delete(sql);
      statements.set(sql, statement);
      return statement;
    },
  };
}

function openSqlite(path: string, busyTimeoutMs: number, logging: Pick<KyselyConfig, 'log'>): Store {
  const file = resolve(path);
  let database: SQLite.Database;
  let links: number;
  try {
    createOwnerOnly(file);
    links = statSync(file).nlink;
  } catch (error) {
    throw unavailable(
      file,
      `cannot open the SQLite file (${(error as { code?: string }).code ?? 'error'})`,
      error,
    );
  }
  refuseHardLinks(file, links);
  try {
    database = new SQLite(file);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma(`busy_timeout = ${SQLITE_BUSY_SLICE_MS}`);
    // The worker checkpoints between occurrences (Store.checkpoint); the automatic one is a backstop.
    database.pragma('wal_autocheckpoint = 10000');
  } catch (error) {
    throw unavailable(
      file,
      `cannot open the SQLite file (${(error as { code?: string }).code ?? 'error'})`,
      error,
    );
  }
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect(
      { database: withStatementCache(database) },
      { database, file, busyTimeoutMs },
    ),
    ...logging,
  });
  // One serving process per SQLite store (decisions §5), so a change needs to reach only this
  // process; a short command's change is seen within the loop's longest sleep.
  const changes = new EventEmitter();
  return {
    db,
    leaseDb: db,
    dialect: 'sqlite',
    location: file,
    notifyChange: async () => {
      changes.emit('change');
    },
    onChange: async (listener) => {
      changes.on('change', listener);
      return async () => {
        changes.off('change', listener);
      };
    },
    // Through Kysely, which holds the one connection: never inside another caller's transaction.
    checkpoint: async () => {
      await sql`pragma wal_checkpoint(PASSIVE)`.execute(db);
    },
    close: () => db.destroy(),
  };
}

// bigint columns (epoch milliseconds, counts) arrive as text from pg; they fit a double exactly.
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

function postgresPool(url: string, max: number): pg.Pool {
  // A connection attempt to a server that does not answer (a partition, not a refusal) gives up
  // instead of holding the loop; the worker's next pass tries again (issue #12).
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // A client that loses its server must not crash the process; the next query reports it. The
  // pool listens on its idle clients only: one checked out (a transaction between two statements)
  // needs a listener of its own, or a terminated connection kills the worker (issue #12, found
  // by `npm run soak`). The pool drops such a client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** Runs a driver step, translating an error that says the server is gone (see `translateStoreError`). */
async function translated<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw translateStoreError(error);
  }
}

/** A PostgreSQL connection whose failures for a lost or refused server are `STORE_UNAVAILABLE`. */
class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return translated(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw translateStoreError(error);
    }
  }
}

/**
 * Kysely's PostgreSQL driver, with every failure that means the server cannot be reached or
 * cannot serve (refused, reset, terminated, shutting down, out of connections) turned into
 * `STORE_UNAVAILABLE` at this one boundary (issue #19), so that every caller — REST (503), the
 * agent tools, the CLI, the worker — sees Ursa's error, never the driver's text or a 500. The
 * driver's own steps get its own connection objects (it keeps private state on them).
 */
class TranslatingDriver implements Driver {
  readonly #wrapped = new WeakMap<DatabaseConnection, TranslatingConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return translated(() => this.inner.init());
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await translated(() => this.inner.acquireConnection());
    let wrapped = this.#wrapped.get(connection);
    if (wrapped === undefined) {
      wrapped = new TranslatingConnection(connection);
      this.#wrapped.set(connection, wrapped);
    }
    return wrapped;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return translated(() => this.inner.beginTransaction(unwrap(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return translated(() => this.inner.commitTransaction(unwrap(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return translated(() => this.inner.rollbackTransaction(unwrap(connection)));
  }

  savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return translated(async () => this.inner.savepoint?.(unwrap(connection), name, compile));
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return translated(async () => this.inner.rollbackToSavepoint?.(unwrap(connection), name, compile));
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return translated(async () => this.inner.releaseSavepoint?.(unwrap(connection), name, compile));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof TranslatingConnection ? connection.inner : connection;
}

class TranslatingPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new TranslatingDriver(super.createDriver());
  }
}

function openPostgres(url: string, logging: Pick<KyselyConfig, 'log'>): Store {
  const location = redactUrl(url);
  const pool = postgresPool(url, 10);
  const leasePool = postgresPool(url, 1);
  const db = new Kysely<Database>({ dialect: new TranslatingPostgresDialect({ pool }), ...logging });
  const leaseDb = new Kysely<Database>({
    dialect: new TranslatingPostgresDialect({ pool: leasePool }),
    ...logging,
  });
  return {
    db,
    leaseDb,
    dialect: 'postgres',
    location,
    notifyChange: () =>
      translated(async () => {
        await pool.query(`NOTIFY ${CHANNEL}`);
      }),
    onChange: (listener) => translated(() => listen(url, listener)),
    checkpoint: async () => {},
    close: async () => {
      await Promise.all([db.destroy(), leaseDb.destroy()]);
    },
  };
}

/** The longest pause between two attempts to re-open a lost LISTEN connection, milliseconds. */
const LISTEN_RETRY_MAX_MS = 5_000;

/**
 * Calls `listener` on every NOTIFY of the change channel, on a connection of its own (a pooled one
 * goes back to the pool and stops hearing). A LISTEN connection the server drops (a restart, a
 * failover, a network cut) is opened again with backoff (100 ms doubling up to
 * {@link LISTEN_RETRY_MAX_MS}), and once it hears again `listener` is called once: a change may
 * have been announced while nobody listened (issue #12).
 *
 * @throws the driver's error when the first connection cannot be opened.
 * @returns the unsubscribe function.
 */
async function listen(url: string, listener: () => void): Promise<() => Promise<void>> {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  const open = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, types, connectionTimeoutMillis: 10_000 });
    current = client;
    client.on('error', () => {}); // 'end' follows; it reconnects
    client.on('notification', (message) => {
      if (message.channel === CHANNEL) listener();
    });
    client.once('end', () => {
      if (current !== client) return;
      current = undefined;
      reopenLater();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    failures = 0;
  };
  const reopenLater = (): void => {
    if (closed || retry !== undefined) return;
    const ms = Math.min(100 * 2 ** failures++, LISTEN_RETRY_MAX_MS);
    retry = setTimeout(() => {
      retry = undefined;
      if (closed) return;
      open().then(
        () => {
          if (closed) void current?.end().catch(() => {});
          else listener();
        },
        () => {
          const failed = current;
          current = undefined;
          void failed?.end().catch(() => {});
          reopenLater();
        },
      );
    }, ms);
  };
  await open();
  return async () => {
    closed = true;
    clearTimeout(retry);
    const client = current;
    current = undefined;
    await client?.end().catch(() => {});
  };
}

/** The driver's error code (`ECONNREFUSED`, `28P01`) of an error or of the driver error it translates. */
function driverCode(error: unknown): string | undefined {
  const driver = error instanceof UrsaError ? error.cause : error;
  const code = (driver as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Applies every pending migration (decisions §5: the same schema on every dialect). */
export async function migrate(store: Store): Promise<void> {
  const { error, results } = await new Migrator({
    db: store.db,
    provider: migrationsFor(store.dialect),
  }).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'a migration';
    const code = driverCode(error);
    throw unavailable(store.location, `${failed} failed${code === undefined ? '' : ` (${code})`}`, error);
  }
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
    await migrate(store);
  } catch (error) {
    await store.close().catch(() => {});
    // Ursa's own refusals as they are; a lost connection's translation names the location here.
    if (error instanceof UrsaError && (error.code !== 'STORE_UNAVAILABLE' || error.cause === undefined))
      throw error;
    const code = driverCode(error);
    throw unavailable(
      store.location,
      `cannot reach the database${code === undefined ? '' : ` (${code})`}`,
      error,
    );
  }
  return store;
}
