import type { KyselyPlugin, OperationNode, RootOperationNode } from 'kysely';
import { InfrastructureError, type UrsaError } from '../../src/errors/index.js';
import { translateStoreError } from '../../src/store/errors.js';
import type { Store, StoreDialect } from '../../src/store/index.js';
import type { Database } from '../../src/store/schema.js';

/** The table a FROM item names (an alias resolved), if it is a plain table. */
function tableOf(node: OperationNode): string | undefined {
  const table = node.kind === 'AliasNode' ? (node as unknown as { node: OperationNode }).node : node;
  if (table.kind !== 'TableNode') return undefined;
  return (table as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
}

/** The tables a statement selects from (its own FROM list, not its subqueries'). */
function selectedTables(node: RootOperationNode): string[] {
  if (node.kind !== 'SelectQueryNode') return [];
  return (node.from?.froms ?? []).flatMap((from) => tableOf(from) ?? []);
}

/**
 * The error the store itself throws when it cannot serve a statement: `STORE_BUSY` on SQLite (the
 * write lock held past the busy timeout), `STORE_UNAVAILABLE` on PostgreSQL (the connection lost,
 * as the pg client reports it, translated as the store's connection translates it).
 */
export function storeFailure(dialect: StoreDialect): UrsaError {
  if (dialect === 'sqlite')
    return new InfrastructureError(
      'STORE_BUSY',
      'store: another connection held the write lock for more than 30000 ms (SQLITE_BUSY); nothing was written — Ursa retries on its next pass',
      { field: 'db' },
    );
  return translateStoreError(new Error('Connection terminated unexpectedly')) as UrsaError;
}

/** A store whose SELECTs from one table can be made to fail, at an exact read (see {@link selectFaults}). */
export interface SelectFaults {
  /** The store with the faults: what the runtime under test is given. */
  readonly store: Store;
  /**
   * Makes the next `count` (default 1) SELECTs from `table` fail with `error()`, after letting
   * `skip` (default 0) of them through; a statement that fails never reaches the database.
   */
  failNext(
    table: keyof Database,
    error: () => Error,
    options?: { readonly count?: number; readonly skip?: number },
  ): void;
  /** Lets every statement through again. */
  disarm(): void;
  /** How many SELECTs were failed so far. */
  readonly failed: number;
}

/**
 * `store` with a Kysely plugin that fails chosen SELECTs by the table they read (both dialects,
 * inside transactions too): a store error at one exact read, as a store that fails for a moment
 * throws it, where everything before and after it works (issue #20).
 */
export function selectFaults(store: Store): SelectFaults {
  let armed: { table: string; error: () => Error; skip: number; count: number } | undefined;
  let failed = 0;
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      if (armed !== undefined && selectedTables(node).includes(armed.table)) {
        if (armed.skip > 0) armed.skip--;
        else {
          const { error } = armed;
          if (--armed.count === 0) armed = undefined;
          failed++;
          throw error();
        }
      }
      return node;
    },
    async transformResult({ result }) {
      return result;
    },
  };
  return {
    store: { ...store, db: store.db.withPlugin(plugin) },
    failNext(table, error, options = {}) {
      armed = { table, error, skip: options.skip ?? 0, count: options.count ?? 1 };
    },
    disarm() {
      armed = undefined;
    },
    get failed() {
      return failed;
    },
  };
}

// The text of a raw statement as far as it begins: its fragments, with the tables it names and
// the raw statements it nests in their places, and any other parameter as `?`.
function rawText(node: OperationNode): string {
  if (node.kind === 'TableNode') return tableOf(node) ?? '?';
  if (node.kind !== 'RawNode') return '?';
  const raw = node as unknown as { sqlFragments: readonly string[]; parameters: readonly OperationNode[] };
  return raw.sqlFragments
    .map(
      (fragment, i) =>
        fragment + (i < raw.parameters.length ? rawText(raw.parameters[i] as OperationNode) : ''),
    )
    .join('');
}

/**
 * What an INSERT or UPDATE writes (the table, and which of the two it is), if the statement is
 * one: a query builder's, or a raw INSERT (the store's bulk inserts, `insertRows`).
 */
function written(
  node: RootOperationNode,
): { table: string | undefined; kind: 'insert' | 'update' } | undefined {
  if (node.kind === 'InsertQueryNode')
    return { table: node.into === undefined ? undefined : tableOf(node.into), kind: 'insert' };
  if (node.kind === 'RawNode') {
    const table = /^\s*insert into (\w+)/i.exec(rawText(node))?.[1];
    return table === undefined ? undefined : { table, kind: 'insert' };
  }
  if (node.kind === 'UpdateQueryNode')
    return { table: node.table === undefined ? undefined : tableOf(node.table), kind: 'update' };
  return undefined;
}

/** A store whose writes of one table can be met by a hook, at an exact statement (see {@link writeHooks}). */
export interface WriteHooks {
  /** The store with the hooks: what the runtime under test is given. */
  readonly store: Store;
  /**
   * Calls `hook` at the next `kind` statement (INSERT or UPDATE) writing `table`, once, before the
   * statement is sent: a hook that throws fails the statement, which never reaches the database.
   */
  onNextWrite(table: keyof Database, kind: 'insert' | 'update', hook: () => void): void;
}

/**
 * `store` with a Kysely plugin that calls a hook at a chosen write (both dialects, inside
 * transactions too): something that happens to the worker, or a store error, at one exact write
 * (issue #20).
 */
export function writeHooks(store: Store): WriteHooks {
  let armed: { table: string; kind: 'insert' | 'update'; hook: () => void } | undefined;
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      const write = written(node);
      if (armed !== undefined && write?.table === armed.table && write.kind === armed.kind) {
        const { hook } = armed;
        armed = undefined;
        hook();
      }
      return node;
    },
    async transformResult({ result }) {
      return result;
    },
  };
  return {
    store: { ...store, db: store.db.withPlugin(plugin) },
    onNextWrite(table, kind, hook) {
      armed = { table, kind, hook };
    },
  };
}
