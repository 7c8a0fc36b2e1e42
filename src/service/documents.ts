import type { HistoryPage } from '../contract/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { refreshProject, refreshTenant } from '../runtime/registrar.js';
import { validateSchedulerDocument } from '../scheduler/document.js';
import { SCHEDULER_PREFIX, schedulerNameFromPath } from '../scheduler/paths.js';
import type { Actor } from '../store/audit.js';
import { type DocumentKey, type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import { formatInstant } from '../time/instant.js';
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
 * @throws UrsaError `ONE_SHOT_FIRED` for a one-shot whose `at:` already fired (restored as it is,
 *   it would not run again: the refresh would trash it anew), and nothing changes; from the
 *   store's restore (e.g. `NOT_FOUND` when there is no such trashed document, `CONFLICT` when a
 *   document is at the original path again).
 */
export async function restoreDocument(
  rt: Runtime,
  tenant: string,
  project: string,
  trashPath: string,
  by: Actor,
): Promise<string> {
  const key = { tenant, project, path: trashPath };
  const refusal = await firedOneShotRefusal(rt, key);
  if (refusal !== undefined) throw refusal;
  const now = rt.clock.now();
  const restored = await rt.repos.documents.restore(key, now, by);
  // A scheduler document is back: its project (every project, for _tenant) picks it up (spec §8).
  if (restored.startsWith(SCHEDULER_PREFIX)) {
    if (project === TENANT_PROJECT) await refreshTenant(rt, tenant, { asOf: now });
    else await refreshProject(rt, tenant, project);
  }
  return restored;
}

/**
 * Why the trashed document at `key` may not be restored, if it may not: a scheduler document that
 * is a one-shot whose `at:` instant already fired in the project (issue #23: restored, it went
 * straight back to the trash and ran nothing). A document that does not load is no such refusal.
 */
async function firedOneShotRefusal(rt: Runtime, key: DocumentKey): Promise<UrsaError | undefined> {
  const trashed = await rt.repos.documents.trashed(key);
  if (trashed === undefined || !trashed.trashedFrom.startsWith(SCHEDULER_PREFIX)) return undefined;
  const name = schedulerNameFromPath(trashed.trashedFrom);
  const loaded = validateSchedulerDocument(trashed.body, { name, path: trashed.trashedFrom });
  if (!loaded.ok || loaded.definition.trigger.kind !== 'at') return undefined;
  const at = loaded.definition.trigger.instant;
  const [fired] = (await rt.repos.projects.fired(key.tenant, key.project, { name, limit: 100 })).filter(
    (f) => f.at === at,
  );
  if (fired === undefined) return undefined;
  return new UrsaError(
    'ONE_SHOT_FIRED',
    `${key.path}: scheduler ${JSON.stringify(name)} is a one-shot that fired at ${formatInstant(fired.firedAt)} (run ${fired.correlationId}); restored as it is it would not run again: write it anew with a later at:`,
    { field: 'path', value: key.path },
  );
}
