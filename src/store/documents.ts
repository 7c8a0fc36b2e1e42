import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely, Selectable } from 'kysely';
import { UrsaError } from '../errors/index.js';
import { isUniqueViolation } from './errors.js';
import { checkLimit } from './feed.js';
import type { Store } from './open.js';
import type { Database, DocumentsTable } from './schema.js';
import { rowIn } from './values.js';

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

/** A document without its body: where it is, its version and its author. */
export interface DocumentHead extends DocumentKey {
  readonly version: number;
  readonly createdBy: string;
}

/** One string per document key (for maps keyed by document). */
export function documentKeyString(key: DocumentKey): string {
  return `${key.tenant}\u0000${key.project}\u0000${key.path}`;
}

/** The tenant-wide pseudo-project of the cascade (spec §3). */
export const TENANT_PROJECT = '_tenant';
export const TRASH_PREFIX = '_vance/trash/';

/** Options of {@link Documents.put}. */
export interface PutOptions {
  /** False: the replaced body is not archived. */
  readonly archive?: boolean;
  /** Write only while this run is in this state (or has no row); see {@link Documents.put}. */
  readonly whileRun?: { readonly correlationId: string; readonly state: string };
}

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
   * Creates, in one statement, those of `rows` whose document does not exist yet (version 1);
   * an existing document is left as it is. For documents only Ursa writes, such as the first
   * run logs of a batch of starts (spec §9a), where a later write of the same run must win.
   */
  async createMissing(rows: readonly Insertable<DocumentsTable>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.store.db
      .insertInto('documents')
      .values([...rows])
      .onConflict((oc) => oc.columns(['tenant', 'project', 'path']).doNothing())
      .execute();
  }

  /**
   * The stamp (`<row id>.<version>`) of each existing document among `keys`, by
   * {@link documentKeyString}: one query, for caches that must notice every change (a write
   * raises the version; a document deleted and made again restarts at version 1 in a new row).
   */
  async stamps(keys: readonly DocumentKey[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await this.store.db
      .selectFrom('documents')
      .select(['id', 'tenant', 'project', 'path', 'version'])
      .where(
        rowIn(
          ['tenant', 'project', 'path'],
          keys.map((k) => [k.tenant, k.project, k.path]),
        ),
      )
      .execute();
    return new Map(rows.map((r) => [documentKeyString(r), `${Number(r.id)}.${Number(r.version)}`]));
  }

  /**
   * The existing documents among `keys`, by {@link documentKeyString}, read in queries of at most
   * 300 keys (for fills of many cached schedulers at once, issue #11).
   */
  async getMany(keys: readonly DocumentKey[]): Promise<Map<string, StoredDocument>> {
    const found = new Map<string, StoredDocument>();
    for (let i = 0; i < keys.length; i += 300) {
      const rows = await this.store.db
        .selectFrom('documents')
        .selectAll()
        .where(
          rowIn(
            ['tenant', 'project', 'path'],
            keys.slice(i, i + 300).map((k) => [k.tenant, k.project, k.path]),
          ),
        )
        .execute();
      for (const row of rows) found.set(documentKeyString(row), toDocument(row));
    }
    return found;
  }

  /**
   * Like {@link list} without the bodies: key, version and author of each document of one
   * (tenant, project) whose path starts with `prefix`, sorted by path (the bootstrap compares
   * versions before it reads any body, issue #11).
   */
  async heads(tenant: string, project: string, prefix: string): Promise<DocumentHead[]> {
    const rows = await this.store.db
      .selectFrom('documents')
      .select(['tenant', 'project', 'path', 'version', 'created_by'])
      .where('tenant', '=', tenant)
      .where('project', '=', project)
      .where((eb) => eb(eb.fn('substr', ['path', eb.val(1), eb.val(prefix.length)]), '=', prefix))
      .orderBy('path')
      .execute();
    return rows.map((r) => ({
      tenant: r.tenant,
      project: r.project,
      path: r.path,
      version: Number(r.version),
      createdBy: r.created_by,
    }));
  }

  /**
   * Creates the document or replaces its body (the old body goes to the archive, version + 1).
   * `now` is UTC epoch ms; `expiresAt` (ms or null) is set on every write. `archive: false` skips
   * the archive for documents rewritten on every transition and deleted by expiry (run logs, spec §9a).
   * `whileRun` writes only while that run is still in that state (or has no row): the log of a run
   * not yet ended, which must never replace the log of a later state, its final one above all
   * (spec §9a). The run's row is locked until the write commits, so an end of the run waits for it
   * and writes its log after; a write that finds the run moved on writes nothing.
   */
  async put(
    key: DocumentKey,
    body: string,
    by: string,
    now: number,
    expiresAt: number | null = null,
    options: PutOptions = {},
  ): Promise<{ created: boolean; version: number }> {
    for (;;) {
      const result = await this.#put(key, body, by, now, expiresAt, options);
      if (!('retry' in result)) return result;
    }
  }

  #put(
    key: DocumentKey,
    body: string,
    by: string,
    now: number,
    expiresAt: number | null,
    options: PutOptions,
  ): Promise<{ created: boolean; version: number } | { created: false; version: number; retry: true }> {
    return this.store.db.transaction().execute(async (trx) => {
      const { whileRun } = options;
      if (whileRun !== undefined) {
        // The run first, then the document: the order in which an end of the run takes them.
        let query = trx
          .selectFrom('runs')
          .select('state')
          .where('correlation_id', '=', whileRun.correlationId);
        // SQLite: the transaction holds the write lock from its start (`begin immediate`).
        if (this.store.dialect === 'postgres') query = query.forShare();
        const run = await query.executeTakeFirst();
        if (run !== undefined && run.state !== whileRun.state) {
          const current = await selectDocument(trx, key);
          return { created: false, version: current === undefined ? 0 : Number(current.version) };
        }
      }
      const existing = await selectDocument(trx, key);
      if (existing === undefined) {
        // Two writers may create the same document at once (two workers and one run log, say):
        // the one that loses the insert retries as an update.
        const inserted = await trx
          .insertInto('documents')
          .values({
            ...key,
            body,
            created_by: by,
            version: 1,
            created_at: now,
            updated_at: now,
            expires_at: expiresAt,
            trashed_from: null,
          })
          .onConflict((oc) => oc.columns(['tenant', 'project', 'path']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { created: true, version: 1 };
        return { created: false, version: 0, retry: true as const };
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
        .set({ path: trashPath, updated_at: now, trashed_from: key.path })
        .where('tenant', '=', key.tenant)
        .where('project', '=', key.project)
        .where('path', '=', key.path)
        .execute();
    });
    return trashPath;
  }

  /**
   * Puts a trashed document back where it was trashed from (decisions §2 "soft delete … with
   * restore"): `key.path` is its `_vance/trash/…` path. The body, version and creator stay; the
   * row forgets its trash path. Callers refresh the project after restoring a scheduler document.
   *
   * @returns the restored path.
   * @throws UrsaError `NOT_FOUND` when (tenant, project) has no trashed document at `key.path`;
   *   `CONFLICT` when a live document already holds the path it was trashed from.
   */
  async restore(key: DocumentKey, now: number): Promise<string> {
    try {
      return await this.store.db.transaction().execute(async (trx) => {
        const trashed = await selectDocument(trx, key);
        if (trashed?.trashed_from == null) {
          throw new UrsaError(
            'NOT_FOUND',
            `path: ${JSON.stringify(key.path)} is not a trashed document of ${key.tenant}/${key.project}`,
            { field: 'path', value: key.path, allowed: `the path of a document in ${TRASH_PREFIX}` },
          );
        }
        const target = trashed.trashed_from;
        if ((await selectDocument(trx, { ...key, path: target })) !== undefined) throw conflict(key, target);
        await trx
          .updateTable('documents')
          .set({ path: target, trashed_from: null, updated_at: now })
          .where('id', '=', trashed.id)
          .execute();
        return target;
      });
    } catch (error) {
      // A document written at the path between the check and the move (another process).
      if (isUniqueViolation(error)) {
        const target = (await selectDocument(this.store.db, key))?.trashed_from ?? key.path;
        throw conflict(key, target);
      }
      throw error;
    }
  }

  /**
   * Deletes documents whose `expiresAt` is at or before `now` (decisions §2 sweeper; spec §9a: the
   * row goes, no archive, no trash); returns how many. With `limit`, at most that many in one bounded
   * statement, so a caller can delete a large backlog batch by batch (`runtime/sweeper.ts`).
   *
   * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
   */
  async sweepExpired(now: number, limit?: number): Promise<number> {
    let query = this.store.db.deleteFrom('documents');
    if (limit === undefined) {
      query = query.where('expires_at', 'is not', null).where('expires_at', '<=', now);
    } else {
      // Neither dialect has a portable DELETE … LIMIT: delete the ids of one bounded select.
      const batch = this.store.db
        .selectFrom('documents')
        .select('id')
        .where('expires_at', 'is not', null)
        .where('expires_at', '<=', now)
        .limit(checkLimit(limit));
      query = query.where('id', 'in', batch);
    }
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function conflict(key: DocumentKey, target: string): UrsaError {
  return new UrsaError(
    'CONFLICT',
    `path: cannot restore ${JSON.stringify(key.path)}: a live document already holds ${JSON.stringify(target)} in ${key.tenant}/${key.project}`,
    { field: 'path', value: key.path, allowed: 'a trashed document whose original path is free' },
  );
}
