import type { KyselyPlugin, OperationNode, RootOperationNode } from 'kysely';
import { UrsaError } from '../../src/errors/index.js';
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
    return new UrsaError(
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
