import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Store } from './open.js';
import type { Database, DocumentsTable } from './schema.js';

/** Where a document lives (decisions §2). `project` `_tenant` holds tenant-wide documents. */
export interface DocumentKey {
  readonly tenant: string;
  readonly project: string;
  readonly path: string;
}

/** A live document. Instants are UTC epoch milliseconds. */
export interface StoredDocument extends DocumentKey {
  readonly body: string;
  readonly createdBy: string;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number | null;
}

/** The tenant-wide pseudo-project of the cascade (spec §3). */
export const TENANT_PROJECT = '_tenant';
export const TRASH_PREFIX = '_vance/trash/';

function toDocument(row: Selectable<DocumentsTable>): StoredDocument {
  return {
    tenant: row.tenant,
    project: row.project,
    path: row.path,
    body: row.body,
    createdBy: row.created_by,
    version: Number(row.version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

function selectDocument(db: Kysely<Database>, key: DocumentKey) {
  return db
    .selectFrom('documents')
    .selectAll()
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('path', '=', key.path)
    .executeTakeFirst();
}

/**
 * The document layer of decisions §2 on the store: versioned bodies, an archive of every
 * replaced body, soft delete to `_vance/trash/`, expiry, and listing by prefix.
 */
export class Documents {
  constructor(private readonly store: Store) {}

  async get(key: DocumentKey): Promise<StoredDocument | undefined> {
    const row = await selectDocument(this.store.db, key);
    return row === undefined ? undefined : toDocument(row);
  }

  /**
   * Creates the document or replaces its body (the old body goes to the archive, version + 1).
   * `now` is UTC epoch ms; `expiresAt` (ms or null) is set on every write. `archive: false` skips
   * the archive for documents rewritten on every transition and deleted by expiry (run logs, spec §9a).
   */
  async put(
    key: DocumentKey,
    body: string,
    by: string,
    now: number,
    expiresAt: number | null = null,
    options: { readonly archive?: boolean } = {},
  ): Promise<{ created: boolean; version: number }> {
    return this.store.db.transaction().execute(async (trx) => {
      const existing = await selectDocument(trx, key);
      if (existing === undefined) {
        await trx
          .insertInto('documents')
          .values({
            ...key,
            body,
            created_by: by,
            version: 1,
            created_at: now,
            updated_at: now,
            expires_at: expiresAt,
          })
          .execute();
        return { created: true, version: 1 };
      }
      if (existing.body === body && existing.expires_at === expiresAt) {
        return { created: false, version: Number(existing.version) };
      }
      const version = Number(existing.version) + 1;
      if (options.archive !== false)
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
      await trx
        .updateTable('documents')
        .set({ body, version, updated_at: now, expires_at: expiresAt })
        .where('id', '=', existing.id)
        .execute();
      return { created: false, version };
    });
  }

  /** Documents of one (tenant, project) whose path starts with `prefix`, sorted by path. */
  async list(tenant: string, project: string, prefix: string): Promise<StoredDocument[]> {
    const rows = await this.store.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      // substr, not LIKE: LIKE is case-insensitive on SQLite and `_` is a wildcard in it.
      .where((eb) => eb(eb.fn('substr', ['path', eb.val(1), eb.val(prefix.length)]), '=', prefix))
      .orderBy('path')
      .execute();
    return rows.map(toDocument);
  }

  /**
   * Moves a document to `_vance/trash/<uuid>_<file name>` (spec §10a), archiving its body.
   * Returns the trash path, or undefined when there was no such document.
   */
  async trash(key: DocumentKey, now: number): Promise<string | undefined> {
    const doc = await this.get(key);
    if (doc === undefined) return undefined;
    const fileName = key.path.slice(key.path.lastIndexOf('/') + 1);
    const trashPath = `${TRASH_PREFIX}${randomUUID()}_${fileName}`;
    await this.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('document_archive')
        .values({
          ...key,
          version: doc.version,
          body: doc.body,
          created_by: doc.createdBy,
          archived_at: now,
          reason: 'trashed',
        })
        .execute();
      await trx
        .updateTable('documents')
        .set({ path: trashPath, updated_at: now })
        .where('tenant', '=', key.tenant)
        .where('project', '=', key.project)
        .where('path', '=', key.path)
        .execute();
    });
    return trashPath;
  }

  /** Deletes documents whose `expiresAt` is at or before `now` (decisions §2 sweeper); returns how many. */
  async sweepExpired(now: number): Promise<number> {
    const result = await this.store.db
      .deleteFrom('documents')
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
