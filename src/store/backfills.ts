import { sql } from 'kysely';
import type { QueuedRun } from '../runs/run.js';
import { type AuditEntry, insertAudit } from './audit.js';
import type { Store } from './open.js';
import { runRow } from './runs.js';
import type { SchedulerKey } from './schedules.js';
import { subplanFence } from './subplan.js';

/** How many occurrences one insert statement writes (SQLite allows 32,766 bound values; a run row has 21). */
const INSERT_CHUNK = 500;

/**
 * The backfill queues of schedulers' lanes (issue #22): a backfill's occurrences are runs of
 * trigger `backfill` in state `queued` that no worker holds, each admitted through its lane when
 * its turn comes (the lane's waiting run first, then the queue's oldest: `Lanes.waiting`).
 */
export class Backfills {
  constructor(private readonly store: Store) {}

  /**
   * Queues `runs` (one scheduler's occurrences, each queued with trigger `backfill`) with the audit
   * row of the request, in one transaction. An occurrence that has a run already (of any trigger
   * or state: the unique key of decisions §4) is left as it is, so a backfill asked twice, or by
   * two callers at once, queues each occurrence once. Returns the correlation ids queued.
   *
   * @throws a store error: nothing was queued.
   */
  async queue(runs: readonly QueuedRun[], audit: (queued: number) => AuditEntry): Promise<Set<string>> {
    return this.store.db.transaction().execute(async (trx) => {
      const queued = new Set<string>();
      for (let i = 0; i < runs.length; i += INSERT_CHUNK) {
        const rows = await trx
          .insertInto('runs')
          .values(runs.slice(i, i + INSERT_CHUNK).map(runRow))
          .onConflict((oc) => oc.columns(['tenant', 'project', 'name', 'scheduled_for']).doNothing())
          .returning('correlation_id')
          .execute();
        for (const row of rows) queued.add(row.correlation_id);
      }
      await insertAudit(trx, audit(queued.size));
      return queued;
    });
  }

  /**
   * Schedulers whose backfill queue's turn has come: a queued backfill occurrence, and neither a
   * started nor a waiting run in the lane (after a restart, or when the run before it ended on a
   * lost worker). At most `limit`, one entry per scheduler, the longest-queued backfill first.
   */
  async ready(limit: number): Promise<SchedulerKey[]> {
    const { rows } = await sql<SchedulerKey>`
      select b.tenant, b.project, b.name from runs as b
      where b.state = 'queued' and b.trigger = 'backfill'
        and not exists (
          select 1 from runs as a
          where a.tenant = b.tenant and a.project = b.project and a.name = b.name
            and (a.state = 'started' or (a.state = 'queued' and a.trigger <> 'backfill'))
          ${subplanFence(this.store.dialect)})
      group by b.tenant, b.project, b.name
      order by min(b.claimed_at)
      limit ${limit}`.execute(this.store.db);
    return rows;
  }
}
