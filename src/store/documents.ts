/**
 * The document layer of the store (decisions §2): the {@link Documents} class, its reads (by key,
 * many keys, prefix, last trashed body), the creation of missing run logs and the expiry sweep.
 * Its writes live beside it: document-put.ts (create or replace), document-trash.ts (trash and
 * restore), with the version rules in document-versions.ts and the row shape in document-rows.ts.
 */
import type { Insertable } from 'kysely';
import type { Actor } from './audit.js';
import { type PutOptions, putDocument } from './document-put.js';
import {
  type DocumentHead,
  type DocumentKey,
  documentKeyString,
  type StoredDocument,
  selectDocument,
  toDocument,
} from './document-rows.js';
import { restoreDocument, trashDocument } from './document-trash.js';
import type { WriteGuard } from './document-versions.js';
import { checkLimit } from './feed.js';
import type { Store } from './open.js';
import type { DocumentsTable } from './schema.js';
import { rowIn } from './values.js';

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
   * The rows' versions are taken as given, not made fresh as {@link put} does: only for paths
   * that never had a document (a run log's path is its run's own).
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
   * raises the version; a document deleted and made again is a new row, and a document not
   * written through {@link put}, such as a run log, may start at version 1 again).
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
   * The body each of `keys` had when it was last trashed (its newest `trashed` archive row, which
   * keeps the original path), by {@link documentKeyString}; a key never trashed is absent. Whether
   * a live document now holds the path is not looked at. Queries of at most 300 keys, each one
   * statement however often a path was trashed (the agent's view of deleted schedulers, issue #19).
   */
  async lastTrashed(keys: readonly DocumentKey[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let i = 0; i < keys.length; i += 300) {
      const newest = this.store.db
        .selectFrom('document_archive')
        .select((eb) => eb.fn.max('id').as('id'))
        .where('reason', '=', 'trashed')
        .where(
          rowIn(
            ['tenant', 'project', 'path'],
            keys.slice(i, i + 300).map((k) => [k.tenant, k.project, k.path]),
          ),
        )
        .groupBy(['tenant', 'project', 'path']);
      const rows = await this.store.db
        .selectFrom('document_archive')
        .select(['tenant', 'project', 'path', 'body'])
        .where('id', 'in', newest)
        .execute();
      for (const row of rows) found.set(documentKeyString(row), row.body);
    }
    return found;
  }

  /**
   * The body version `version` of the document at `key` had when it was replaced or trashed (its
   * newest archive row of that version; issue #23), undefined when the archive has none — the
   * live document's own version is not looked at.
   */
  async archivedBody(key: DocumentKey, version: number): Promise<string | undefined> {
    const row = await this.store.db
      .selectFrom('document_archive')
      .select('body')
      .where('tenant', '=', key.tenant)
      .where('project', '=', key.project)
      .where('path', '=', key.path)
      .where('version', '=', version)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.body;
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
   * `whileRun` writes only while that run is still in that state (or has no row), and at the same
   * attempt when a fencing token is given: the log of a run not yet ended, which must never
   * replace the log of a later state, its final one above all (spec §9a), nor that of a later
   * attempt (decisions §5). The run's row is locked until the write commits, so an end of the run waits for it
   * and writes its log after; a write that finds the run moved on writes nothing.
   *
   * One transaction (issue #19): the current row is read locked, the {@link WriteGuard} is checked
   * on it, the version goes up by one from the row as locked, the replaced body is archived and
   * the write recorded in the audit trail — all or nothing. So concurrent writers of one document
   * each get their own version, in order, and every replaced body is archived exactly once; a
   * create that loses to another writer's create is retried as an update of the winner's row.
   * A create takes a version the path never had (see {@link freshVersion}): 1 for a new path.
   *
   * @param by who writes: the creator of a new document, and the writer in the audit trail.
   * @throws UrsaError `VERSION_MISMATCH` (see {@link WriteGuard.expectedVersion}), or what
   *   {@link WriteGuard.check} throws; nothing is written then.
   */
  async put(
    key: DocumentKey,
    body: string,
    by: Actor,
    now: number,
    expiresAt: number | null = null,
    options: PutOptions = {},
  ): Promise<{ created: boolean; version: number }> {
    return putDocument(this.store, key, body, by, now, expiresAt, options);
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
   * Moves a document to `_vance/trash/<uuid>_<file name>` (spec §10a), archiving its body, in one
   * transaction with its {@link WriteGuard} checked on the row as locked and the delete recorded in
   * the audit trail by `actor` (default: Ursa itself, as for a fired one-shot).
   * Returns the trash path, or undefined when there was no such document.
   *
   * @throws UrsaError `VERSION_MISMATCH`, or what {@link WriteGuard.check} throws; nothing changes then.
   */
  async trash(
    key: DocumentKey,
    now: number,
    options: WriteGuard & { readonly actor?: Actor } = {},
  ): Promise<string | undefined> {
    return trashDocument(this.store, key, now, options);
  }

  /**
   * The trashed document at `key` (a path under the trash): its body and the path it was trashed
   * from; undefined when `key` holds no trashed document.
   */
  async trashed(key: DocumentKey): Promise<{ body: string; trashedFrom: string } | undefined> {
    const row = await selectDocument(this.store.db, key);
    return row?.trashed_from == null ? undefined : { body: row.body, trashedFrom: row.trashed_from };
  }

  /**
   * Puts a trashed document back where it was trashed from (decisions §2 "soft delete … with
   * restore"): `key.path` is its `_vance/trash/…` path. The body and creator stay; the version is
   * one the path never had (see {@link freshVersion}), so a version kept from before the trash, or
   * from a document made and deleted at the path meanwhile, matches nothing; the row forgets its
   * trash path. Callers refresh the project after restoring a scheduler document.
   * The restore is recorded in the audit trail as `by`'s, in the same transaction.
   *
   * @returns the restored path.
   * @throws UrsaError `NOT_FOUND` when (tenant, project) has no trashed document at `key.path`;
   *   `CONFLICT` when a live document already holds the path it was trashed from.
   */
  async restore(key: DocumentKey, now: number, by: Actor): Promise<string> {
    return restoreDocument(this.store, key, now, by);
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
