import { type Kysely, sql } from 'kysely';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from './document-rows.js';
import type { SchedulerKey } from './schedules.js';
import type { Database } from './schema.js';

/**
 * How many runs of a scheduler (in the project it fires in) have started since its document was
 * created: what its `maxRuns` counts (issue #22). A run counts once it started, whatever its
 * outcome; a skipped one never started. The document is the project's own, else the `_tenant` one
 * (spec §3); a scheduler deleted and written again counts afresh. Pass a transaction to count
 * under a lane's lock.
 *
 * @throws a store error.
 */
export async function runsStarted(db: Kysely<Database>, key: SchedulerKey): Promise<number> {
  const created = db
    .selectFrom('documents')
    .select('created_at')
    .where('tenant', '=', key.tenant)
    .where('project', 'in', [key.project, TENANT_PROJECT])
    .where('path', '=', schedulerPath(key.name))
    .orderBy(sql`case when project = ${key.project} then 0 else 1 end`)
    .limit(1);
  const row = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('name', '=', key.name)
    .where('started_at', 'is not', null)
    .where('started_at', '>=', (eb) => eb.fn.coalesce(created, eb.lit(0)))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
