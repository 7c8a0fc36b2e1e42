import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { DocumentKey } from '../store/document-rows.js';
import { actorOf, type Caller, type VersionGuard } from './caller.js';

/**
 * The writes recipes and workflows share (decisions §2, issue #19): a document of the caller's
 * project put or moved to the trash as the caller, in one transaction with the guard's
 * compare-and-swap and the audit row. The caller validates the document first.
 */

/**
 * Creates or replaces the document at `path` of the caller's project, already validated.
 *
 * @throws UrsaError `VERSION_MISMATCH` when `guard` expected another version; nothing changes.
 */
export async function putNamedDocument(
  rt: Runtime,
  caller: Caller,
  path: string,
  yaml: string,
  guard: VersionGuard = {},
): Promise<{ path: string; created: boolean; version: number }> {
  const now = rt.clock.now();
  const written = await rt.repos.documents.put(
    { tenant: caller.tenant, project: caller.project, path },
    yaml,
    actorOf(caller),
    now,
    null,
    guard,
  );
  // After the write: a refused one (VERSION_MISMATCH) changes nothing.
  await rt.repos.users.ensure(caller.tenant, caller.user, now);
  return { path, created: written.created, version: written.version };
}

/**
 * Moves the `kind` document `name` at `path` of the caller's project to the trash (restorable),
 * recorded as the caller's delete. Returns its trash path.
 *
 * @throws UrsaError `NOT_FOUND` when the project has no such document; `VERSION_MISMATCH` when
 *   `guard` expected another version.
 */
export async function trashNamedDocument(
  rt: Runtime,
  caller: Caller,
  kind: string,
  name: string,
  path: string,
  guard: VersionGuard = {},
): Promise<{ trashPath: string }> {
  const key: DocumentKey = { tenant: caller.tenant, project: caller.project, path };
  const trashPath = await rt.repos.documents.trash(key, rt.clock.now(), { ...guard, actor: actorOf(caller) });
  if (trashPath === undefined) {
    throw new UrsaError(
      'NOT_FOUND',
      `${kind} ${JSON.stringify(name)} does not exist in ${caller.tenant}/${caller.project}`,
      { field: 'name', value: name },
    );
  }
  return { trashPath };
}
