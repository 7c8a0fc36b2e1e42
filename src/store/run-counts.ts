import type { Kysely } from 'kysely';
import type { SchedulerKey } from './schedules.js';
import type { Database } from './schema.js';

/** How many runs of a scheduler there are, by outcome, and how many of them were coalesced. */
export interface RunCounts {
  /** Runs recorded (claimed, started, ended or skipped), whatever their outcome. */
  readonly runs: number;
  /** Per outcome (`completed`, `failed`, `skipped_overlap`, …; `pending` while open). */
  readonly byOutcome: Readonly<Record<string, number>>;
  /** Runs that stood for several missed occurrences (decisions §4). */
  readonly coalesced: number;
}

/**
 * The run counts of a scheduler in the project it fires in (issue #22 describe), over every run the
 * store keeps of it; with `visibleToAgents`, only runs that were not `hidden` when claimed (what an
 * agent may count, spec §10b).
 *
 * @throws a store error.
 */
export async function runCounts(
  db: Kysely<Database>,
  key: SchedulerKey,
  options: { readonly visibleToAgents?: boolean } = {},
): Promise<RunCounts> {
  let query = db
    .selectFrom('runs')
    .select((eb) => [
      'outcome',
      eb.fn.countAll<number | string>().as('count'),
      eb.fn.sum<number | string | null>('coalesced').as('coalesced'),
    ])
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('name', '=', key.name);
  if (options.visibleToAgents) query = query.where('lock_mode', '!=', 'hidden');
  const rows = await query.groupBy('outcome').orderBy('outcome').execute();
  const byOutcome: Record<string, number> = {};
  let runs = 0;
  let coalesced = 0;
  for (const row of rows) {
    byOutcome[row.outcome] = Number(row.count);
    runs += Number(row.count);
    coalesced += Number(row.coalesced ?? 0);
  }
  return { runs, byOutcome, coalesced };
}
