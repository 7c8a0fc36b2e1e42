import type { Kysely } from 'kysely';
import { FOLDED_SHOWN, type FoldedRuns, type RunTrigger } from '../runs/run.js';
import type { Database } from './schema.js';

/**
 * The requests folded into each of the waiting runs `correlationIds` (issue #23; outcome
 * `skipped_overlap_queued`, spec §5): their count and the first {@link FOLDED_SHOWN} folded, for a run
 * log's timeline and a run's views. Runs with none are absent from the map. One query, then one per run
 * with folds, indexed on `folded_into`.
 *
 * @throws a store error.
 */
export async function foldedRuns(
  db: Kysely<Database>,
  correlationIds: readonly string[],
): Promise<Map<string, FoldedRuns>> {
  const found = new Map<string, FoldedRuns>();
  if (correlationIds.length === 0) return found;
  const counts = await db
    .selectFrom('runs')
    .select((eb) => ['folded_into', eb.fn.countAll<number | string>().as('n')])
    .where('folded_into', 'in', correlationIds)
    .groupBy('folded_into')
    .execute();
  if (counts.length === 0) return found;
  // One bounded query per run that has folds: a run that waited an hour behind an every-second
  // cron has thousands, of which only the oldest few are named.
  for (const c of counts) {
    const into = c.folded_into as string;
    const rows = await db
      .selectFrom('runs')
      .select(['correlation_id', 'trigger', 'scheduled_for', 'ended_at'])
      .where('folded_into', '=', into)
      // In the order they were folded, as the run log's timeline lists them (a fire's occurrence
      // may precede a cron tick folded before it).
      .orderBy('ended_at', 'asc')
      .orderBy('scheduled_for', 'asc')
      .limit(FOLDED_SHOWN)
      .execute();
    found.set(into, {
      count: Number(c.n),
      first: rows.map((r) => ({
        correlationId: r.correlation_id,
        trigger: r.trigger as RunTrigger,
        scheduledFor: Number(r.scheduled_for),
        endedAt: r.ended_at === null ? null : Number(r.ended_at),
      })),
    });
  }
  return found;
}
