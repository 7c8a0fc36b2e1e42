/**
 * The write of one document (issue #19): {@link putDocument} creates it or replaces its body in one
 * transaction — read locked, guarded, versioned, archived and audited — for {@link Documents.put}.
 */
import { type Actor, insertAudit } from './audit.js';
import { selectDocument } from './document-rows.js';
import { freshVersion, guard, type WriteGuard } from './document-versions.js';
import { tokenOf } from './fencing.js';
import type { DocumentKey } from './keys.js';
import type { Store } from './open.js';
import { type PauseNote, writePause } from './pauses.js';

/** Options of {@link Documents.put}. */
export interface PutOptions extends WriteGuard {
  /** False: the replaced body is not archived, and the write is not in the audit trail (run logs: Ursa's own, rewritten on every transition, spec §9a). */
  readonly archive?: boolean;
  /**
   * Write only while this run is in this state (or has no row) and, with `fencingToken`, still at
   * the attempt of that token (null: not started); see {@link Documents.put}.
   */
  readonly whileRun?: {
    readonly correlationId: string;
    readonly state: string;
    readonly fencingToken?: number | null;
  };
  /**
   * The pause note of the scheduler `scheduler` (this document), written (a note: a pause) or
   * cleared (null: a resume) in the write's transaction, with its audit row when it changed
   * (issue #22); undefined leaves it as it is.
   */
  readonly pause?: { readonly scheduler: string; readonly note: PauseNote | null };
}

/**
 * {@link Documents.put} on `store` (arguments as {@link putOnce}'s): one transaction per try,
 * again while a create loses to another writer's.
 */
export async function putDocument(
  ...args: Parameters<typeof putOnce>
): Promise<{ created: boolean; version: number }> {
  for (;;) {
    const result = await putOnce(...args);
    if (!('retry' in result)) return result;
  }
}

/** One try of a put: `now` and `expiresAt` are UTC epoch ms (null: never expires). */
function putOnce(
  store: Store,
  key: DocumentKey,
  body: string,
  by: Actor,
  now: number,
  expiresAt: number | null,
  options: PutOptions,
): Promise<{ created: boolean; version: number } | { created: false; version: number; retry: true }> {
  return store.db.transaction().execute(async (trx) => {
    const { whileRun } = options;
    if (whileRun !== undefined) {
      // The run first, then the document: the order in which an end of the run takes them.
      let query = trx
        .selectFrom('runs')
        .select(['state', 'fencing_token'])
        .where('correlation_id', '=', whileRun.correlationId);
      // SQLite: the transaction holds the write lock from its start (`begin immediate`).
      if (store.dialect === 'postgres') query = query.forShare();
      const run = await query.executeTakeFirst();
      const moved =
        run !== undefined &&
        (run.state !== whileRun.state ||
          (whileRun.fencingToken !== undefined && tokenOf(run.fencing_token) !== whileRun.fencingToken));
      if (moved) {
        const current = await selectDocument(trx, key);
        return { created: false, version: current === undefined ? 0 : Number(current.version) };
      }
    }
    const existing = await selectDocument(trx, key, store);
    guard(key, existing, options);
    const pause = async () => {
      if (options.pause === undefined) return;
      const { scheduler, note } = options.pause;
      if (!(await writePause(trx, key, note))) return;
      await insertAudit(trx, {
        tenant: key.tenant,
        project: key.project,
        at: now,
        subjectType: 'scheduler',
        subject: scheduler,
        action: note === null ? 'resume' : 'pause',
        actor: by,
        ...(note === null ? {} : { detail: { note: note.note } }),
      });
    };
    const audited = options.archive !== false;
    const audit = (action: 'create' | 'update', version: number) =>
      audited
        ? insertAudit(trx, {
            tenant: key.tenant,
            project: key.project,
            at: now,
            subjectType: 'document',
            subject: key.path,
            action,
            version,
            actor: by,
          })
        : Promise.resolve();
    if (existing === undefined) {
      // Two writers may create the same document at once (two workers and one run log, say):
      // the one that loses the insert retries as an update, its guard checked on the winner's row.
      // Ursa's own unaudited documents (run logs, one fresh path per run) have no history to
      // step over: no two queries on the run path for a version that is always 1.
      const first = audited ? await freshVersion(trx, key) : 1;
      const inserted = await trx
        .insertInto('documents')
        .values({
          ...key,
          body,
          created_by: by.user,
          version: first,
          created_at: now,
          updated_at: now,
          expires_at: expiresAt,
          trashed_from: null,
        })
        .onConflict((oc) => oc.columns(['tenant', 'project', 'path']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1)
        return { created: false, version: 0, retry: true as const };
      await audit('create', first);
      await pause();
      return { created: true, version: first };
    }
    if (existing.body === body && existing.expires_at === expiresAt) {
      // A pause of a scheduler disabled already changes only its note.
      await pause();
      return { created: false, version: Number(existing.version) };
    }
    // No compare-and-swap needed: the row is locked as read (see selectDocument), so its version
    // is still the one read when this transaction commits.
    const version = Number(existing.version) + 1;
    await trx
      .updateTable('documents')
      .set({ body, version, updated_at: now, expires_at: expiresAt })
      .where('id', '=', existing.id)
      .execute();
    if (audited)
      await trx
        .insertInto('document_archive')
        .values({
          ...key,
          version: Number(existing.version),
          body: existing.body,
          created_by: existing.created_by,
          archived_at: now,
          reason: 'replaced',
        })
        .execute();
    await audit('update', version);
    await pause();
    return { created: false, version };
  });
}
