import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyConfig,
  PostgresDialect,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { UrsaError } from '../errors/index.js';
import { translateStoreError } from './errors.js';
import type { Store } from './open.js';
import type { Database } from './schema.js';

/**
 * The PostgreSQL side of the store (decisions §5: several workers share it): the pools (one for
 * the lease renewals), the driver that translates a lost or refused server into
 * `STORE_UNAVAILABLE`, the change channel (LISTEN/NOTIFY, re-opened with backoff), and
 * {@link openPostgres}.
 */

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

// bigint columns (epoch milliseconds, counts) arrive as text from pg; they fit a double exactly.
const INT8_OID = 20;
/** pg's type parsers with `bigint` as a JavaScript number (shared with the copy's snapshot). */
export const pgTypes = {
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
    types: pgTypes,
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

/** Opens (without migrating) the PostgreSQL store at `url`. */
export function openPostgres(url: string, logging: Pick<KyselyConfig, 'log'>): Store {
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
    backup: async () => {
      throw new UrsaError(
        'BACKUP_UNSUPPORTED',
        `store: ${location} is a PostgreSQL database: back it up with pg_dump (pg_dump -Fc -f ursa.dump <url>) and restore it with pg_restore`,
        { field: 'db', value: location, allowed: 'a SQLite store' },
      );
    },
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
    const client = new pg.Client({ connectionString: url, types: pgTypes, connectionTimeoutMillis: 10_000 });
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
