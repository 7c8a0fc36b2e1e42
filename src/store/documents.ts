import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely, Selectable } from 'kysely';
import { UrsaError } from '../errors/index.js';
import { type Actor, highestAuditedVersion, insertAudit, URSA_ACTOR } from './audit.js';
import { isUniqueViolation } from './errors.js';
import { checkLimit } from './feed.js';
import { tokenOf } from './fencing.js';
import type { DocumentKey } from './keys.js';
import type { Store } from './open.js';
import type { Database, DocumentsTable } from './schema.js';
import { rowIn } from './values.js';

// In its own module so that audit.ts, which documents.ts imports, needs nothing from here.
export type { DocumentKey } from './keys.js';

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

/**
 * What a write of a document must find (issue #19), checked on the document as locked in the
 * write's own transaction — never on an earlier read, which another writer may have overtaken.
 */
export interface WriteGuard {
  /**
   * Compare-and-swap: the version the writer last read (0: the document must not exist). Another
   * version is `VERSION_MISMATCH` and nothing is written.
   */
  readonly expectedVersion?: number | undefined;
  /** Where {@link expectedVersion} came from, named by the error: `If-Match` (REST), `expectedVersion` (tools, default). */
  readonly expectedField?: string | undefined;
  /**
   * A rule on the current document (undefined: there is none), e.g. the creator/`runAs` rule of a
   * scheduler write: it throws to refuse, and nothing is written. Called again on the winner's row
   * when a create loses to another writer's create of the same path.
   */
  readonly check?: (current: StoredDocument | undefined) => void;
}

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

function selectDocument(db: Kysely<Database>, key: DocumentKey, forUpdate?: Store) {
  let query = db
    .selectFrom('documents')
    .selectAll()
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('path', '=', key.path);
  // PostgreSQL: the row stays locked until the write commits, and a writer waiting for it reads
  // the version the other one committed. SQLite: the transaction holds the write lock from its
  // start (`begin immediate`), so nobody else writes meanwhile.
  if (forUpdate?.dialect === 'postgres') query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * Applies a {@link WriteGuard} to the current document of a write (undefined: none). A write does
 * so inside its transaction; a caller may also do so on an earlier read, to refuse before it does
 * anything else.
 *
 * @throws UrsaError `VERSION_MISMATCH`, or what the guard's `check` throws.
 */
export function checkWrite(key: DocumentKey, current: StoredDocument | undefined, options: WriteGuard): void {
  options.check?.(current);
  const { expectedVersion } = options;
  const version = current?.version ?? 0;
  if (expectedVersion !== undefined && expectedVersion !== version)
    throw versionMismatch(key, expectedVersion, version, options.expectedField ?? 'expectedVersion');
}

/**
 * The version of a document that comes to `key`'s path while no live document holds it (a create,
 * a restore): one more than the highest version the path ever had, in the archive (every replaced
 * and trashed body) or the audit trail (every version written, deleted or restored there), so no
 * version of a path is ever reused, and a version a writer kept from a document deleted since
 * can never match the one that came after it (issue #19). Read in the write's transaction after
 * the path was found free: on PostgreSQL a delete of the path's document that was under way has
 * committed by then (the locked read waited for it), and two writes that read the same number
 * cannot both take the path (its unique key), so the loser retries or is a `CONFLICT`.
 */
async function freshVersion(db: Kysely<Database>, key: DocumentKey): Promise<number> {
  const archived = await db
    .selectFrom('document_archive')
    .select((eb) => eb.fn.max('version').as('v'))
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('path', '=', key.path)
    .executeTakeFirst();
  return Math.max(Number(archived?.v ?? 0), await highestAuditedVersion(db, key)) + 1;
}

function guard(key: DocumentKey, row: Selectable<DocumentsTable> | undefined, options: WriteGuard): void {
  checkWrite(key, row === undefined ? undefined : toDocument(row), options);
}

/** The `VERSION_MISMATCH` of a write that expected `expected` (0: no document) and found `current` (0: none). */
function versionMismatch(key: DocumentKey, expected: number, current: number, field: string): UrsaError {
  const wanted = expected === 0 ? 'no document' : `version ${expected}`;
  const found = current === 0 ? 'there is no document' : `it is at version ${current}`;
  return new UrsaError(
    'VERSION_MISMATCH',
    `${field}: expected ${wanted} at ${key.project}/${key.path}, but ${found}: read it again, then write with the version read`,
    {
      field,
      value: expected,
      allowed: current === 0 ? 'no version: the document does not exist' : String(current),
    },
  );
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
    for (;;) {
      const result = await this.#put(key, body, by, now, expiresAt, options);
      if (!('retry' in result)) return result;
    }
  }

  #put(
    key: DocumentKey,
    body: string,
    by: Actor,
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
          .select(['state', 'fencing_token'])
          .where('correlation_id', '=', whileRun.correlationId);
        // SQLite: the transaction holds the write lock from its start (`begin immediate`).
        if (this.store.dialect === 'postgres') query = query.forShare();
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
      const existing = await selectDocument(trx, key, this.store);
      guard(key, existing, options);
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
        return { created: true, version: first };
      }
      if (existing.body === body && existing.expires_at === expiresAt) {
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
    return this.store.db.transaction().execute(async (trx) => {
      const doc = await selectDocument(trx, key, this.store);
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
    try {
      return await this.store.db.transaction().execute(async (trx) => {
        const trashed = await selectDocument(trx, key, this.store);
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
