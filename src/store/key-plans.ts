import { sql, type Transaction } from 'kysely';
import type { StoreDialect } from './open.js';
import type { Database } from './schema.js';

/**
 * Has PostgreSQL read tables by their indexes for the rest of `trx` (`enable_seqscan` off, and
 * `jit` with it, local to the transaction; nothing on SQLite). For the transactions of claims,
 * starts and ends, whose statements touch up to a thousand rows each named by its key: on the
 * statistics of a table that grew since they were gathered (runs, schedule states, processes grow
 * by thousands a second at a top of the hour) the planner costed reading the whole table below a
 * thousand key lookups, and a batch read a hundred thousand rows to move a thousand (issue #24).
 * A statement with no index to use still scans (a sequence, a table of a few rows): the setting
 * only prices a scan above every index path (up to PostgreSQL 17), and so the plan's estimated
 * cost far above the threshold of PostgreSQL's just-in-time compilation, which is off with it (it
 * compiled each claim for half a second). Both settings need PostgreSQL 11 or later.
 *
 * A key lookup that also filters on a state or status names that column inside an expression
 * (`(state || '') in (…)`), so that the partial indexes of active runs and processes, whose dead
 * entries a busy minute multiplies, are no way in either.
 */
export async function planByKeys(trx: Transaction<Database>, dialect: StoreDialect): Promise<void> {
  if (dialect === 'postgres')
    await sql`select set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)`.execute(trx);
}
