import { EventEmitter } from 'node:events';
import { chmodSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyConfig,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from 'kysely';
import { InfrastructureError, UrsaError } from '../errors/index.js';
import { NOT_SERVING, storeUnavailable, translateStoreError } from './errors.js';
import type { Store } from './open.js';
import type { Database } from './schema.js';

/**
 * The SQLite side of the store (decisions §5: one serving process per file): the connection that
 * takes the write lock at `begin`, waits out another connection's lock and translates the driver's
 * faults into Ursa's (`STORE_BUSY`, `STORE_FULL`, `STORE_LOCKED`, `STORE_UNAVAILABLE`), the
 * owner-only file modes, and {@link openSqlite}.
 */

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
export function refuseHardLinks(file: string, links: number): void {
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

/** Opens (without migrating) the SQLite store in the file `path`, creating it owner-only when missing. */
export function openSqlite(path: string, busyTimeoutMs: number, logging: Pick<KyselyConfig, 'log'>): Store {
  const file = resolve(path);
  let database: SQLite.Database;
  let links: number;
  try {
    createOwnerOnly(file);
    links = statSync(file).nlink;
  } catch (error) {
    throw storeUnavailable(
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
    // 64 MiB of page cache instead of SQLite's 2 MB: the indexes a top of the hour writes into
    // (runs, feed, run logs) outgrow 2 MB with a few thousand schedulers, and every page evicted
    // is read again (issue #24).
    database.pragma('cache_size = -65536');
  } catch (error) {
    throw storeUnavailable(
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
    backup: (target) => backupSqlite(database, file, target),
    close: () => db.destroy(),
  };
}

/** {@link Store.backup} on SQLite: a new owner-only file, filled by the driver's backup API. */
async function backupSqlite(database: SQLite.Database, file: string, target: string): Promise<void> {
  const path = resolve(target);
  if (existsSync(path) || path === file) {
    throw new UrsaError('ARGUMENT_INVALID', `file: ${path} exists already; back up into a new file`, {
      field: 'file',
      value: path,
      allowed: 'the path of a file that does not exist yet',
    });
  }
  try {
    createOwnerOnly(path);
    await database.backup(path);
  } catch (error) {
    throw storeUnavailable(
      path,
      `cannot write the backup (${(error as { code?: string }).code ?? 'error'})`,
      error,
    );
  }
}
