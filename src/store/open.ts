import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from 'kysely';
import pg from 'pg';
import { UrsaError } from '../errors/index.js';
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

function unavailable(location: string, reason: string): UrsaError {
  return new UrsaError('STORE_UNAVAILABLE', `store: ${location}: ${reason}`, {
    field: 'db',
    value: location,
  });
}

/**
 * SQLite transactions that take the write lock when they begin (`begin immediate`): a deferred
 * transaction that reads first and then writes fails at once with SQLITE_BUSY when another
 * connection wrote meanwhile, whereas waiting for the lock at `begin` honours busy_timeout.
 * Every Ursa transaction writes, so nothing is lost by locking early.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
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

function openSqlite(path: string): Store {
  const file = resolve(path);
  let database: SQLite.Database;
  try {
    mkdirSync(dirname(file), { recursive: true });
    database = new SQLite(file);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('busy_timeout = 5000');
    // The worker checkpoints between occurrences (Store.checkpoint); the automatic one is a backstop.
    database.pragma('wal_autocheckpoint = 10000');
  } catch (error) {
    throw unavailable(file, `cannot open the SQLite file (${(error as { code?: string }).code ?? 'error'})`);
  }
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }),
  });
  // One process per SQLite file (decisions §5), so a change needs to reach only this process.
  const changes = new EventEmitter();
  return {
    db,
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

function openPostgres(url: string): Store {
  const location = redactUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: 10, types });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    location,
    notifyChange: async () => {
      await pool.query(`NOTIFY ${CHANNEL}`);
    },
    onChange: async (listener) => {
      // LISTEN needs a connection of its own: a pooled one goes back to the pool and stops hearing.
      const client = new pg.Client({ connectionString: url, types });
      client.on('error', () => {});
      client.on('notification', (message) => {
        if (message.channel === CHANNEL) listener();
      });
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      return () => client.end();
    },
    checkpoint: async () => {},
    close: () => db.destroy(),
  };
}

/** Applies every pending migration (decisions §5: the same schema on every dialect). */
export async function migrate(store: Store): Promise<void> {
  const { error, results } = await new Migrator({
    db: store.db,
    provider: migrationsFor(store.dialect),
  }).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'a migration';
    const code = (error as { code?: string }).code;
    throw unavailable(store.location, `${failed} failed${code === undefined ? '' : ` (${code})`}`);
  }
}

/**
 * Opens the store at `location` — a SQLite file path, or a `postgres://` URL — and brings its
 * schema up to date.
 *
 * @throws UrsaError `STORE_UNAVAILABLE` when the database cannot be opened, reached or migrated
 *   (the message names the location without its password, never the driver's text).
 */
export async function openStore(location: string): Promise<Store> {
  const store = isPostgresUrl(location) ? openPostgres(location) : openSqlite(location);
  try {
    await migrate(store);
  } catch (error) {
    await store.close().catch(() => {});
    if (error instanceof UrsaError) throw error;
    const code = (error as { code?: string }).code;
    throw unavailable(store.location, `cannot reach the database${code === undefined ? '' : ` (${code})`}`);
  }
  return store;
}
