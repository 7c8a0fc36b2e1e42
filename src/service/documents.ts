import type { HistoryPage } from '../contract/index.js';
import type { Runtime } from '../runtime/context.js';
import { refreshProject, refreshTenant } from '../runtime/registrar.js';
import { SCHEDULER_PREFIX } from '../scheduler/paths.js';
import type { Actor } from '../store/audit.js';
import { type DocumentKey, type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import { historyEntryView } from './views.js';

/**
 * Reading documents of a project (decisions §2) — one by path, those under a prefix, the history
 * of one, the newest trashed bodies of some — and restoring a trashed one. Instants are UTC epoch ms.
 */

/** The document at `key`; undefined when there is none (a trashed one is under its trash path). */
export function getDocument(
  rt: Pick<Runtime, 'repos'>,
  key: DocumentKey,
): Promise<StoredDocument | undefined> {
  return rt.repos.documents.get(key);
}

/** The documents of a project whose path starts with `prefix` ('' for all), sorted by path, with bodies. */
export function listDocuments(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
  prefix: string,
): Promise<StoredDocument[]> {
  return rt.repos.documents.list(tenant, project, prefix);
}

/**
 * One page of the history of the document at `key` (issue #19), newest first: at most
 * `page.limit` entries below the cursor `page.before` (an id), as the REST contract's
 * `HistoryPage`; `nextCursor` is the next page's `before`, null on the last.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a `limit` that is not a whole number ≥ 1.
 */
export async function documentHistoryPage(
  rt: Pick<Runtime, 'repos'>,
  key: DocumentKey,
  page: { readonly limit: number; readonly before?: number | undefined },
): Promise<HistoryPage> {
  const found = await rt.repos.audit.documentHistory(key, page);
  return { path: key.path, history: found.records.map(historyEntryView), nextCursor: found.nextCursor };
}

/**
 * The newest trashed body of each of `keys` that has one, by `documentKeyString` of the key (one
 * query per 300 keys).
 */
export function lastTrashedBodies(
  rt: Pick<Runtime, 'repos'>,
  keys: readonly DocumentKey[],
): Promise<Map<string, string>> {
  return rt.repos.documents.lastTrashed(keys);
}

/**
 * Moves the trashed document at `trashPath` of (tenant, project) back to where it was trashed
 * from, at the runtime's now, as `by` (in the audit trail); returns that path. A scheduler document
 * back in place is picked up at once: its project is refreshed, or for `_tenant` every project (as
 * of the restore, decisions §5).
 *
 * @throws UrsaError from the store's restore (e.g. `NOT_FOUND` when there is no such trashed
 *   document, `CONFLICT` when a document is at the original path again).
 */
export async function restoreDocument(
  rt: Runtime,
  tenant: string,
  project: string,
  trashPath: string,
  by: Actor,
): Promise<string> {
  const now = rt.clock.now();
  const restored = await rt.repos.documents.restore({ tenant, project, path: trashPath }, now, by);
  // A scheduler document is back: its project (every project, for _tenant) picks it up (spec §8).
  if (restored.startsWith(SCHEDULER_PREFIX)) {
    if (project === TENANT_PROJECT) await refreshTenant(rt, tenant, { asOf: now });
    else await refreshProject(rt, tenant, project);
  }
  return restored;
}
