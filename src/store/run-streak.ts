import type { Kysely } from 'kysely';
import type { SchedulerKey } from './schedules.js';
import type { Database } from './schema.js';

/**
 * The outcomes of the latest `limit` runs of a scheduler (in the project it fires in) that ended
 * `completed` or `failed` and started (or, never started, were claimed) at or after `since` (UTC
 * ms), newest end first: what its `pauseOnFailure` counts (issue #22, `failureStreakReached`).
 *
 * @throws a store error.
 */
export async function latestFinalOutcomes(
  db: Kysely<Database>,
  key: SchedulerKey,
  since: number,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('runs')
    .select('outcome')
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('name', '=', key.name)
    .where('state', '=', 'ended')
    .where('outcome', 'in', ['completed', 'failed'])
    // A run that failed before it started (spawn failed, its worker lost) counts from its claim.
    .where((eb) => eb(eb.fn.coalesce('started_at', 'claimed_at'), '>=', since))
    .orderBy('ended_at', 'desc')
    .orderBy('claimed_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.outcome);
}
