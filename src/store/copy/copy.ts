import { resolve } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { InfrastructureError, UrsaError } from '../../errors/index.js';
import { migrationsFor } from '../migrations/index.js';
import { isPostgresUrl, openStore, redactUrl, type Store } from '../open.js';
import type { Database } from '../schema.js';
import { type Row, TableChecksum } from './checksum.js';
import { readFencingCounter, writeFencingCounter } from './counters.js';
import { openSnapshot, type Snapshot } from './snapshot.js';
import { COPIED_TABLES, isKnownTable } from './tables.js';

/** How {@link copyStore} runs. */
export interface CopyOptions {
  /** Replace the target's contents when it holds any (never a merge). */
  readonly force?: boolean;
  /** Copy a source whose workers are live (a consistent snapshot of a running store). */
  readonly live?: boolean;
  /** Now, UTC epoch ms: a source worker whose heartbeat is within `leaseMs` of it is live. */
  readonly now: number;
  /** How long a worker's heartbeat keeps it live, ms (its lease and the takeover margin). */
  readonly leaseMs: number;
  /** Rows per read and per insert (default 500; fewer for wide tables). */
  readonly batchSize?: number;
}

/** One table of a copy: its rows and checksum in the source, and in the target afterwards. */
export interface TableSummary {
  readonly table: string;
  readonly sourceRows: number;
  readonly targetRows: number;
  /** 64 hex digits (see `TableChecksum`). */
  readonly sourceChecksum: string;
  readonly targetChecksum: string;
  readonly equal: boolean;
}

/** What a copy did. */
export interface CopyResult {
  readonly from: string;
  readonly to: string;
  readonly tables: readonly TableSummary[];
  /** True when every table's count and checksum are equal. */
  readonly verified: boolean;
}

/** Most bound parameters one insert carries: below SQLite's 32766 and PostgreSQL's 65535. */
const MAX_PARAMETERS = 30_000;

/**
 * Copies the whole store at `from` into the store at `to` (issue #26; each a SQLite file path or a
 * `postgres://` URL, either direction): every table of `TABLE_ROLES` marked `copy`, read from one
 * consistent snapshot of the source (`openSnapshot`) in keyset batches by primary key, written to
 * the target — migrated to the same version first — in one transaction (so a failure leaves the
 * target as it was), serial ids' sequences set past the copied ids on PostgreSQL. Then the target
 * is read again and each table's row count and checksum compared with the source's. The source
 * is never written; the target keeps its own identity (`store_identity`).
 *
 * @throws UrsaError `ARGUMENT_INVALID` when `from` and `to` name the same store;
 *   `STORE_SCHEMA_MISMATCH` when the source's migrations differ from this Ursa's or it holds a
 *   table no copy knows; `STORE_IN_USE` when the source has live workers and not `live`, or the
 *   target has any;
 *   `STORE_NOT_EMPTY` when the target holds data and not `force`; `STORE_UNAVAILABLE` when either
 *   cannot be opened. A verification that finds a difference is no throw: see
 *   {@link CopyResult.verified}.
 */
export async function copyStore(from: string, to: string, options: CopyOptions): Promise<CopyResult> {
  if (sameStore(from, to)) {
    throw new UrsaError('ARGUMENT_INVALID', 'to: the target is the source itself; copy into another store', {
      field: 'to',
      value: redactUrl(to),
      allowed: 'another SQLite file or PostgreSQL database',
    });
  }
  const source = await openSnapshot(from);
  let sums: Map<string, TableChecksum>;
  let target: Store | undefined;
  try {
    await checkSource(source, options);
    target = await openStore(to);
    sums = await writeTarget(source, target, options);
  } finally {
    await source.close();
    await target?.close();
  }
  const after = await openSnapshot(to);
  try {
    const tables: TableSummary[] = [];
    for (const table of COPIED_TABLES) {
      const copied = await readTable(after, table, options.batchSize);
      const original = sums.get(table) as TableChecksum;
      tables.push({
        table,
        sourceRows: original.rows,
        targetRows: copied.rows,
        sourceChecksum: original.hex,
        targetChecksum: copied.hex,
        equal: original.rows === copied.rows && original.hex === copied.hex,
      });
    }
    return {
      from: source.location,
      to: after.location,
      tables,
      verified: tables.every((t) => t.equal),
    };
  } finally {
    await after.close();
  }
}

/** The error of a copy whose target does not hold what the source held (see {@link CopyResult}). */
export function copyMismatch(result: CopyResult): InfrastructureError {
  const tables = result.tables.filter((t) => !t.equal).map((t) => t.table);
  return new InfrastructureError(
    'STORE_COPY_MISMATCH',
    `store: the copy in ${result.to} differs from ${result.from} in ${tables.join(', ')}; copy again with --force`,
    { field: 'to', value: result.to },
  );
}

function sameStore(from: string, to: string): boolean {
  if (isPostgresUrl(from) !== isPostgresUrl(to)) return false;
  return isPostgresUrl(from) ? from === to : resolve(from) === resolve(to);
}

async function checkSource(source: Snapshot, options: CopyOptions): Promise<void> {
  const expected = Object.keys(await migrationsFor(source.dialect).getMigrations()).sort();
  const applied = await source.migrations().catch(() => []);
  if (applied.join() !== expected.join()) {
    throw new UrsaError(
      'STORE_SCHEMA_MISMATCH',
      `from: ${source.location} is at schema version ${applied.at(-1) ?? '(none)'}, this Ursa at ${expected.at(-1)}; open it once with this version of Ursa (any ursa command migrates it), or upgrade Ursa`,
      { field: 'from', value: source.location, allowed: `a store at schema version ${expected.at(-1)}` },
    );
  }
  const unknown = (await source.tables()).filter((table) => !isKnownTable(table));
  if (unknown.length > 0) {
    throw new UrsaError(
      'STORE_SCHEMA_MISMATCH',
      `from: ${source.location} holds tables this Ursa does not know (${unknown.join(', ')}); copy it with the Ursa version that made them`,
      { field: 'from', value: source.location },
    );
  }
  const live = Number(
    await source.scalar('select count(*) from workers where stopped_at is null and heartbeat_at >= ?', [
      options.now - options.leaseMs,
    ]),
  );
  if (live > 0 && options.live !== true) {
    throw new UrsaError(
      'STORE_IN_USE',
      `from: ${source.location} has ${live} live worker${live === 1 ? '' : 's'}; stop them first, or pass --live to copy a consistent snapshot of the running store (its runs in flight are reaped or adopted on the target like any run of a lost worker)`,
      { field: 'from', value: source.location, allowed: 'a store without live workers, or --live' },
    );
  }
}

/** Empties (with `force`) and fills the target in one transaction; returns the source's checksums. */
async function writeTarget(
  source: Snapshot,
  target: Store,
  options: CopyOptions,
): Promise<Map<string, TableChecksum>> {
  return target.db.transaction().execute(async (trx) => {
    const live = await trx
      .selectFrom('workers')
      .select('id')
      .where('stopped_at', 'is', null)
      .where('heartbeat_at', '>=', options.now - options.leaseMs)
      .limit(1)
      .executeTakeFirst();
    if (live !== undefined) {
      throw new UrsaError(
        'STORE_IN_USE',
        `to: ${target.location} has live workers; stop them before its contents are replaced`,
        { field: 'to', value: target.location, allowed: 'a store without live workers' },
      );
    }
    const filled: (keyof Database)[] = [];
    for (const table of COPIED_TABLES) {
      const row = await trx.selectFrom(table).select(sql<number>`1`.as('one')).limit(1).executeTakeFirst();
      if (row !== undefined) filled.push(table);
    }
    if (filled.length > 0 && options.force !== true) {
      throw new UrsaError(
        'STORE_NOT_EMPTY',
        `to: ${target.location} already holds data (${filled.join(', ')}); copy into an empty store, or pass --force to replace its contents`,
        { field: 'to', value: target.location, allowed: 'an empty store, or --force' },
      );
    }
    for (const table of filled) await trx.deleteFrom(table).execute();
    const sums = new Map<string, TableChecksum>();
    for (const table of COPIED_TABLES) {
      sums.set(
        table,
        await readTable(source, table, options.batchSize, (rows) =>
          trx
            .insertInto(table)
            .values(rows as never)
            .execute(),
        ),
      );
    }
    if (target.dialect === 'postgres') await resetSequences(trx);
    await writeFencingCounter(trx, target.dialect, await readFencingCounter(source));
    return sums;
  });
}

/**
 * Reads every row of `table` in keyset batches, checksumming them and handing each batch to
 * `each` (the target's insert) before the next is read.
 */
async function readTable(
  snapshot: Snapshot,
  table: string,
  batchSize = 500,
  each?: (rows: Row[]) => Promise<unknown>,
): Promise<TableChecksum> {
  const columns = await snapshot.columns(table);
  const key = await snapshot.primaryKey(table);
  if (key.length === 0) {
    throw new UrsaError('STORE_SCHEMA_MISMATCH', `from: table ${table} has no primary key`, {
      field: 'from',
      value: snapshot.location,
    });
  }
  const sum = new TableChecksum(new Set(columns.filter((c) => c.integer).map((c) => c.name)));
  const limit = Math.max(1, Math.min(batchSize, Math.floor(MAX_PARAMETERS / columns.length)));
  let after: unknown[] | undefined;
  for (;;) {
    const rows = await snapshot.batch(table, key, after, limit);
    for (const row of rows) sum.add(row);
    if (rows.length > 0) await each?.(rows);
    if (rows.length < limit) return sum;
    const last = rows[rows.length - 1] as Row;
    after = key.map((column) => last[column]);
  }
}

/** Sets each serial column's sequence past the largest id copied (PostgreSQL). */
async function resetSequences(trx: Kysely<Database>): Promise<void> {
  const serials = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and column_default like 'nextval(%'`.execute(trx);
  for (const { table_name, column_name } of serials.rows) {
    await sql`select setval(pg_get_serial_sequence(${table_name}, ${column_name}), coalesce(max(${sql.ref(column_name)}), 0) + 1, false) from ${sql.table(table_name)}`.execute(
      trx,
    );
  }
}
