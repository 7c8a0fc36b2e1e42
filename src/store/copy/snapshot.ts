import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { UrsaError } from '../../errors/index.js';
import { storeUnavailable } from '../errors.js';
import type { StoreDialect } from '../open.js';
import { isPostgresUrl, pgTypes, redactUrl } from '../postgres.js';
import { refuseHardLinks } from '../sqlite.js';
import type { Row } from './checksum.js';

/** A column of a table, and whether it holds integers. */
export interface Column {
  readonly name: string;
  readonly integer: boolean;
}

/**
 * One consistent read of a whole store (issue #26): every read sees the store as it was when the
 * snapshot began, whatever is written meanwhile, and nothing is ever written. SQLite: a deferred
 * `BEGIN` on a read-only connection of its own (a snapshot in WAL mode; no write lock, so a
 * serving process goes on, and it never counts as one); PostgreSQL: `REPEATABLE READ READ ONLY`.
 */
export interface Snapshot {
  readonly dialect: StoreDialect;
  /** The file path, or the URL without its password. */
  readonly location: string;
  /** Every table of the store, Ursa's and the migrations' bookkeeping. */
  tables(): Promise<string[]>;
  /** The columns of `table`, in the table's order. */
  columns(table: string): Promise<Column[]>;
  /** The primary key columns of `table`, in key order; empty when it has none. */
  primaryKey(table: string): Promise<string[]>;
  /** The names of the applied migrations, sorted. */
  migrations(): Promise<string[]>;
  /** A scalar query's one value (`count(*)` and the like); `?` placeholders. */
  scalar(query: string, params: readonly unknown[]): Promise<unknown>;
  /**
   * Up to `limit` rows of `table` after the key `after` (none: from the first), ordered by its
   * primary key `key`: keyset paging, so memory holds one batch.
   */
  batch(
    table: string,
    key: readonly string[],
    after: readonly unknown[] | undefined,
    limit: number,
  ): Promise<Row[]>;
  close(): Promise<void>;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The keyset query of {@link Snapshot.batch}, with `?` placeholders. */
function batchSql(table: string, key: readonly string[], after: boolean): string {
  const keys = key.map(quote).join(', ');
  const where = after ? ` where (${keys}) > (${key.map(() => '?').join(', ')})` : '';
  return `select * from ${quote(table)}${where} order by ${keys} limit ?`;
}

/**
 * Opens a snapshot of the store at `location`: a SQLite file (which must exist: nothing is
 * created) or a `postgres://` URL.
 *
 * @throws UrsaError `STORE_UNAVAILABLE` when the store cannot be opened or reached.
 */
export async function openSnapshot(location: string): Promise<Snapshot> {
  return isPostgresUrl(location) ? openPostgresSnapshot(location) : openSqliteSnapshot(location);
}

function openSqliteSnapshot(path: string): Snapshot {
  let file = resolve(path);
  let db: SQLite.Database;
  try {
    // The file's one real name: SQLite finds a serving process's write-ahead log by it.
    file = realpathSync(file);
    refuseHardLinks(file, statSync(file).nlink);
    db = new SQLite(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.exec('begin');
    // The snapshot begins at the first read.
    db.prepare('select count(*) from sqlite_master').get();
  } catch (error) {
    if (error instanceof UrsaError) throw error;
    throw storeUnavailable(
      file,
      `cannot read the SQLite file (${(error as { code?: string }).code ?? 'error'})`,
      error,
    );
  }
  const all = (query: string, params: readonly unknown[] = []) => db.prepare(query).all(...params) as Row[];
  return {
    dialect: 'sqlite',
    location: file,
    tables: async () =>
      all(
        `select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\'`,
      ).map((r) => String(r.name)),
    columns: async (table) =>
      all('select name, type from pragma_table_info(?) order by cid', [table]).map((r) => ({
        name: String(r.name),
        integer: /int/i.test(String(r.type)),
      })),
    primaryKey: async (table) =>
      all('select name from pragma_table_info(?) where pk > 0 order by pk', [table]).map((r) =>
        String(r.name),
      ),
    migrations: async () => all('select name from kysely_migration order by name').map((r) => String(r.name)),
    scalar: async (query, params) => Object.values(db.prepare(query).get(...params) as Row)[0],
    batch: async (table, key, after, limit) =>
      all(batchSql(table, key, after !== undefined), [...(after ?? []), limit]),
    close: async () => {
      if (db.inTransaction) db.exec('rollback');
      db.close();
    },
  };
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`, … */
function numbered(query: string): string {
  let n = 0;
  return query.replace(/\?/g, () => `$${++n}`);
}

async function openPostgresSnapshot(url: string): Promise<Snapshot> {
  const location = redactUrl(url);
  const client = new pg.Client({ connectionString: url, types: pgTypes, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('begin isolation level repeatable read read only');
  } catch (error) {
    await client.end().catch(() => {});
    throw storeUnavailable(
      location,
      `cannot reach the database (${(error as { code?: string }).code ?? 'error'})`,
      error,
    );
  }
  const all = async (query: string, params: readonly unknown[] = []) =>
    (await client.query(numbered(query), [...params])).rows as Row[];
  return {
    dialect: 'postgres',
    location,
    tables: async () =>
      (
        await all(
          `select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`,
        )
      ).map((r) => String(r.name)),
    columns: async (table) =>
      (
        await all(
          'select column_name as name, data_type as type from information_schema.columns where table_schema = current_schema() and table_name = ? order by ordinal_position',
          [table],
        )
      ).map((r) => ({ name: String(r.name), integer: /int|serial/i.test(String(r.type)) })),
    primaryKey: async (table) =>
      (
        await all(
          `select a.attname as name from pg_index i
             join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
           where i.indrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?)) and i.indisprimary
           order by array_position(i.indkey::int2[], a.attnum)`,
          [table],
        )
      ).map((r) => String(r.name)),
    migrations: async () =>
      (await all('select name from kysely_migration order by name')).map((r) => String(r.name)),
    scalar: async (query, params) => Object.values((await all(query, params))[0] ?? {})[0],
    batch: (table, key, after, limit) =>
      all(batchSql(table, key, after !== undefined), [...(after ?? []), limit]),
    close: async () => {
      await client.query('rollback').catch(() => {});
      await client.end().catch(() => {});
    },
  };
}
