/**
 * Soft delete (spec §10a, decisions §2): a document moves to `_vance/trash/` with its body
 * archived ({@link trashDocument}), and comes back to the path it was trashed from
 * ({@link restoreDocument}), each in one audited transaction, for `Documents.trash` and
 * `Documents.restore`.
 */
import { randomUUID } from 'node:crypto';
import { UrsaError } from '../errors/index.js';
import { type Actor, insertAudit, URSA_ACTOR } from './audit.js';
import { selectDocument } from './document-rows.js';
import { freshVersion, guard, type WriteGuard } from './document-versions.js';
import { isUniqueViolation } from './errors.js';
import type { DocumentKey } from './keys.js';
import type { Store } from './open.js';

export const TRASH_PREFIX = '_vance/trash/';

/** {@link Documents.trash} on `store`. */
export async function trashDocument(
  store: Store,
  key: DocumentKey,
  now: number,
  options: WriteGuard & { readonly actor?: Actor } = {},
): Promise<string | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const doc = await selectDocument(trx, key, store);
    guard(key, doc, options);
    if (doc === undefined) return undefined;
    const fileName = key.path.slice(key.path.lastIndexOf('/') + 1);
    const trashPath = `${TRASH_PREFIX}${randomUUID()}_${fileName}`;
    await trx
      .insertInto('document_archive')
      .values({
        ...key,
        version: Number(doc.version),
        body: doc.body,
        created_by: doc.created_by,
        archived_at: now,
        reason: 'trashed',
      })
      .execute();
    await trx
      .updateTable('documents')
      .set({ path: trashPath, updated_at: now, trashed_from: key.path })
      .where('id', '=', doc.id)
      .execute();
    await insertAudit(trx, {
      tenant: key.tenant,
      project: key.project,
      at: now,
      subjectType: 'document',
      subject: key.path,
      action: 'delete',
      version: Number(doc.version),
      trashPath,
      actor: options.actor ?? URSA_ACTOR,
    });
    return trashPath;
  });
}

/** {@link Documents.restore} on `store`. */
export async function restoreDocument(
  store: Store,
  key: DocumentKey,
  now: number,
  by: Actor,
): Promise<string> {
  try {
    return await store.db.transaction().execute(async (trx) => {
      const trashed = await selectDocument(trx, key, store);
      if (trashed?.trashed_from == null) {
        throw new UrsaError(
          'NOT_FOUND',
          `path: ${JSON.stringify(key.path)} is not a trashed document of ${key.tenant}/${key.project}`,
          { field: 'path', value: key.path, allowed: `the path of a document in ${TRASH_PREFIX}` },
        );
      }
      const target = trashed.trashed_from;
      if ((await selectDocument(trx, { ...key, path: target })) !== undefined) throw conflict(key, target);
      const version = await freshVersion(trx, { ...key, path: target });
      await trx
        .updateTable('documents')
        .set({ path: target, trashed_from: null, updated_at: now, version })
        .where('id', '=', trashed.id)
        .execute();
      await insertAudit(trx, {
        tenant: key.tenant,
        project: key.project,
        at: now,
        subjectType: 'document',
        subject: target,
        action: 'restore',
        version,
        trashPath: key.path,
        actor: by,
      });
      return target;
    });
  } catch (error) {
    // A document written at the path between the check and the move (another process).
    if (isUniqueViolation(error)) {
      const target = (await selectDocument(store.db, key))?.trashed_from ?? key.path;
      throw conflict(key, target);
    }
    throw error;
  }
}

function conflict(key: DocumentKey, target: string): UrsaError {
  return new UrsaError(
    'CONFLICT',
    `path: cannot restore ${JSON.stringify(key.path)}: a live document already holds ${JSON.stringify(target)} in ${key.tenant}/${key.project}`,
    { field: 'path', value: key.path, allowed: 'a trashed document whose original path is free' },
  );
}
