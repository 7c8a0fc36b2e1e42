import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * How many runs of a project (of every scheduler in it) started at or after `since` (UTC ms):
 * what its run budget counts over a rolling window (issue #22). Each start of a run counts, with
 * its latest attempt's instant. Pass a transaction to count under the project's lock.
 *
 * @throws a store error.
 */
export async function runsStartedSince(
  db: Kysely<Database>,
  tenant: string,
  project: string,
  since: number,
): Promise<number> {
  const row = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('tenant', '=', tenant)
    .where('project', '=', project)
    .where('started_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
