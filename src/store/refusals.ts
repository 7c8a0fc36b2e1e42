import type { Insertable } from 'kysely';
import type { Store } from './open.js';
import { ACTIVE_STATUSES } from './processes.js';
import type { Run } from './runs.js';
import type { SchedulerKey } from './schedules.js';
import type { DocumentsTable, FeedTable, InboxTable } from './schema.js';

/**
 * A one-shot run that did not start, and what records it (spec §10a: a one-shot is used up only by
 * a start): its start was refused (a workflow target while workflows are off, an engine this
 * worker lacks), or its attempt never entered its engine (the worker lost its lease or was
 * stopping).
 */
export interface OneShotRelease {
  readonly correlationId: string;
  /** The worker that holds the run; only it may release it. */
  readonly workerId: string;
  /** The state the run must still be in (`claimed`, `queued`, or `started` once admitted). */
  readonly from: Run['state'];
  /** For a `started` run: the fencing token of the attempt releasing it, which must still hold it. */
  readonly fencingToken?: number | null | undefined;
  /**
   * The attempt's process row (never entered): ended `stopped` with `reason` (at `at`, UTC ms);
   * with `mustBeReady`, the run is released only while that row is still `ready` (never entered).
   */
  readonly process?:
    | { readonly id: string; readonly reason: string; readonly at: number; readonly mustBeReady?: boolean }
    | undefined;
  readonly line: Insertable<FeedTable>;
  /** An inbox item for its user (a refusal they can act on); none for a release retried at once. */
  readonly inbox?: Insertable<InboxTable> | undefined;
  /** Its run log; undefined when run logs are off. */
  readonly log: Insertable<DocumentsTable> | undefined;
  /**
   * Plans the occurrence again at once (its schedule state waits for `instant`, UTC ms, again),
   * for a release that is no refusal; a refused one is planned again only by a refresh or a
   * worker's start, so that a refusal never loops.
   */
  readonly replan?: { readonly key: SchedulerKey; readonly instant: number; readonly at: number } | undefined;
}

/**
 * Releases the occurrence of a one-shot that did not start (spec §10a: no marker, no trash; it is
 * tried again): in one transaction the run row is deleted, so that a later claim of the same
 * occurrence can insert its own, and — only when this call deleted it — its process row is ended,
 * the feed line, inbox item and run log are written and the occurrence is planned again when
 * asked. So each release is recorded exactly once, whichever paths race on the run.
 *
 * @returns whether this call released the run (false: it was not in `from`, not held by
 *   `workerId`, or started by another attempt).
 */
export async function releaseOneShot(store: Store, release: OneShotRelease): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    let deleting = trx
      .deleteFrom('runs')
      .where('correlation_id', '=', release.correlationId)
      .where('state', '=', release.from)
      .where('worker_id', '=', release.workerId);
    if (release.fencingToken !== undefined && release.fencingToken !== null)
      deleting = deleting.where('fencing_token', '=', release.fencingToken);
    const { process, replan } = release;
    if (process?.mustBeReady === true) {
      // Locked (PostgreSQL; SQLite has one writer), so the attempt's move to `running` before its
      // entry waits for this release and then finds its run gone.
      let readiness = trx
        .selectFrom('processes')
        .select('id')
        .where('id', '=', process.id)
        .where('status', '=', 'ready');
      if (store.dialect === 'postgres') readiness = readiness.forUpdate();
      if ((await readiness.executeTakeFirst()) === undefined) return false;
    }
    const deleted = await deleting.executeTakeFirst();
    if (Number(deleted.numDeletedRows) !== 1) return false;
    if (process !== undefined)
      await trx
        .updateTable('processes')
        .set({ status: 'stopped', ended_at: process.at, reason: process.reason })
        .where('id', '=', process.id)
        .where('status', 'in', [...ACTIVE_STATUSES])
        .execute();
    await trx.insertInto('feed').values(release.line).execute();
    if (release.inbox !== undefined) await trx.insertInto('inbox').values(release.inbox).execute();
    if (release.log !== undefined)
      await trx
        .insertInto('documents')
        .values(release.log)
        .onConflict((oc) =>
          oc.columns(['tenant', 'project', 'path']).doUpdateSet((eb) => ({
            body: eb.ref('excluded.body'),
            updated_at: eb.ref('excluded.updated_at'),
            expires_at: eb.ref('excluded.expires_at'),
          })),
        )
        .execute();
    if (replan !== undefined)
      await trx
        .updateTable('schedule_state')
        .set({ next_run_at: replan.instant, updated_at: replan.at })
        .where('tenant', '=', replan.key.tenant)
        .where('project', '=', replan.key.project)
        .where('name', '=', replan.key.name)
        .where('next_run_at', 'is', null)
        .execute();
    return true;
  });
}
