import type { Insertable } from 'kysely';
import type { Store } from './open.js';
import type { Run } from './runs.js';
import type { DocumentsTable, FeedTable, InboxTable } from './schema.js';

/** A one-shot run whose start was refused, and what records the refusal (spec §10a). */
export interface OneShotRefusal {
  readonly correlationId: string;
  /** The worker that holds the run; only it may release it. */
  readonly workerId: string;
  /** The state the run must still be in (`claimed`, `queued`, or `started` when refused after its admission). */
  readonly from: Run['state'];
  readonly line: Insertable<FeedTable>;
  readonly inbox: Insertable<InboxTable>;
  /** Its run log; undefined when run logs are off. */
  readonly log: Insertable<DocumentsTable> | undefined;
}

/**
 * Releases the occurrence of a one-shot whose start was refused (spec §10a: no marker, no trash;
 * it is tried again later): in one transaction the run row is deleted, so that a later claim of
 * the same occurrence can insert its own, and — only when this call deleted it — the refusal's
 * feed line, inbox item and run log are written. So each refusal is recorded exactly once,
 * whichever paths race on the run. The schedule state is left as the claim left it (no next
 * occurrence): only a refresh or a worker's start plans the occurrence again.
 *
 * @returns whether this call released the run (false: it was not in `from`, or not held by `workerId`).
 */
export async function releaseRefusedOneShot(store: Store, refusal: OneShotRefusal): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    const deleted = await trx
      .deleteFrom('runs')
      .where('correlation_id', '=', refusal.correlationId)
      .where('state', '=', refusal.from)
      .where('worker_id', '=', refusal.workerId)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) !== 1) return false;
    await trx.insertInto('feed').values(refusal.line).execute();
    await trx.insertInto('inbox').values(refusal.inbox).execute();
    if (refusal.log !== undefined)
      await trx
        .insertInto('documents')
        .values(refusal.log)
        .onConflict((oc) =>
          oc.columns(['tenant', 'project', 'path']).doUpdateSet((eb) => ({
            body: eb.ref('excluded.body'),
            updated_at: eb.ref('excluded.updated_at'),
            expires_at: eb.ref('excluded.expires_at'),
          })),
        )
        .execute();
    return true;
  });
}
