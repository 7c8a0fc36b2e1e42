import { type Kysely, sql } from 'kysely';
import type { StoreDialect } from '../open.js';
import type { Database } from '../schema.js';
import type { Snapshot } from './snapshot.js';

/**
 * The last fencing token a store gave out (`src/store/fencing.ts`), which lives where each dialect
 * keeps it: the `fencing_counter` row on SQLite, the `run_fencing_token` sequence on PostgreSQL.
 * A copy carries it as a value (issue #26), so that the target's next attempt gets a token above
 * every token the source gave, as it would have on the source.
 */
export async function readFencingCounter(snapshot: Snapshot): Promise<number> {
  const value =
    snapshot.dialect === 'sqlite'
      ? await snapshot.scalar('select last_token from fencing_counter where id = ?', [1])
      : await snapshot.scalar(
          'select case when is_called then last_value else last_value - 1 end from run_fencing_token where ? = 1',
          [1],
        );
  return Number(value ?? 0);
}

/** Sets the target's fencing counter to `last` (see {@link readFencingCounter}), in `trx`. */
export async function writeFencingCounter(
  trx: Kysely<Database>,
  dialect: StoreDialect,
  last: number,
): Promise<void> {
  if (dialect === 'sqlite')
    await sql`update fencing_counter set last_token = ${last} where id = 1`.execute(trx);
  else await sql`select setval('run_fencing_token', ${Math.max(last, 1)}, ${last > 0})`.execute(trx);
}

/** The tables that hold such counters on some dialect: known to a copy, carried by value. */
export const COUNTER_TABLES: readonly string[] = ['fencing_counter'];
