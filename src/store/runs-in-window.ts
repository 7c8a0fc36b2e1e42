import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * How many runs of a project (of every scheduler in it) started at or after `since` (UTC ms):
 * what its run budget counts over a rolling window (issue #22). Each attempt counts at the instant
 * it started: a run's latest from its row, a retried run's earlier ones from `run_attempts`. Pass
 * a transaction to count under the project's lock.
 *
 * @throws a store error.
 */
export async function runsStartedSince(
  db: Kysely<Database>,
  tenant: string,
  project: string,
  since: number,
): Promise<number> {
  const count = async (table: 'runs' | 'run_attempts') => {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where('started_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  };
  // A run's row holds its latest attempt; a retried run's earlier attempts are in run_attempts.
  return (await count('runs')) + (await count('run_attempts'));
}
