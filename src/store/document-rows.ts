/**
 * What a document is, as the rest of Ursa sees it and as a row is read: the live document and its
 * head, one string per document key, the tenant-wide pseudo-project, and the (locked) read of
 * one row, shared by the document layer's reads and writes.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DocumentKey } from './keys.js';
import type { Store } from './open.js';
import type { Database, DocumentsTable } from './schema.js';

// In its own module so that audit.ts, which the document writes import, needs nothing from here.
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

export function toDocument(row: Selectable<DocumentsTable>): StoredDocument {
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

export function selectDocument(db: Kysely<Database>, key: DocumentKey, forUpdate?: Store) {
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
