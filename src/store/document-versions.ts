/**
 * The versions of document writes (issue #19): the {@link WriteGuard} a write checks on the
 * document as locked in its own transaction (compare-and-swap, `VERSION_MISMATCH`), and the
 * fresh version a path takes when a document comes to it (a create, a restore).
 */
import type { Kysely, Selectable } from 'kysely';
import { UrsaError } from '../errors/index.js';
import { highestAuditedVersion } from './audit.js';
import { type StoredDocument, toDocument } from './document-rows.js';
import type { DocumentKey } from './keys.js';
import type { Database, DocumentsTable } from './schema.js';

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
export async function freshVersion(db: Kysely<Database>, key: DocumentKey): Promise<number> {
  const archived = await db
    .selectFrom('document_archive')
    .select((eb) => eb.fn.max('version').as('v'))
    .where('tenant', '=', key.tenant)
    .where('project', '=', key.project)
    .where('path', '=', key.path)
    .executeTakeFirst();
  return Math.max(Number(archived?.v ?? 0), await highestAuditedVersion(db, key)) + 1;
}

export function guard(
  key: DocumentKey,
  row: Selectable<DocumentsTable> | undefined,
  options: WriteGuard,
): void {
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
