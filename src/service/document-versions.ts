import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { validateName } from '../scheduler/name.js';
import { schedulerPath } from '../scheduler/paths.js';
import type { DocumentKey } from '../store/document-rows.js';
import type { Caller, VersionGuard } from './caller.js';
import { type SetResult, setScheduler } from './schedulers.js';

/**
 * Earlier versions of documents (issue #23): reading one from the archive, and writing a
 * scheduler's earlier version back as its newest.
 */

/** One version of a document: its body, and whether it is the live document's version. */
export interface DocumentVersion {
  readonly path: string;
  readonly version: number;
  readonly body: string;
  readonly current: boolean;
}

/**
 * Version `version` of the document at `key`: the live document when it is at that version, else
 * the body the archive kept when that version was replaced or trashed; undefined when neither has it.
 */
export async function documentVersion(
  rt: Pick<Runtime, 'repos'>,
  key: DocumentKey,
  version: number,
): Promise<DocumentVersion | undefined> {
  const live = await rt.repos.documents.get(key);
  if (live?.version === version) return { path: key.path, version, body: live.body, current: true };
  const body = await rt.repos.documents.archivedBody(key, version);
  return body === undefined ? undefined : { path: key.path, version, body, current: false };
}

/**
 * Version `version` of scheduler `name` of the caller's project.
 *
 * @throws UrsaError `ARGUMENT_INVALID` for a bad name; `NOT_FOUND` when it never had that version.
 */
export async function schedulerVersion(
  rt: Pick<Runtime, 'repos'>,
  caller: Pick<Caller, 'tenant' | 'project'>,
  name: string,
  version: number,
): Promise<DocumentVersion> {
  validateName(name, 'scheduler name');
  const key = { tenant: caller.tenant, project: caller.project, path: schedulerPath(name) };
  const found = await documentVersion(rt, key, version);
  if (found === undefined) {
    throw new UrsaError(
      'NOT_FOUND',
      `version: scheduler "${name}" of ${caller.tenant}/${caller.project} has no version ${version}`,
      { field: 'version', value: version, allowed: 'a version its history lists' },
    );
  }
  return found;
}

/**
 * Writes version `version` of scheduler `name` back as its newest version, as a scheduler write
 * of `caller` (validated, audited and picked up like a PUT; with `guard`, only while the
 * document is at the version it expects). A deleted scheduler comes back this way too.
 *
 * @throws UrsaError `NOT_FOUND` when it never had that version; what {@link setScheduler} throws
 *   (`DOCUMENT_INVALID` for a version that no longer validates, `VERSION_MISMATCH`, `FORBIDDEN`).
 */
export async function restoreSchedulerVersion(
  rt: Runtime,
  caller: Caller,
  name: string,
  version: number,
  guard: VersionGuard = {},
): Promise<SetResult> {
  const found = await schedulerVersion(rt, caller, name, version);
  return setScheduler(rt, caller, name, found.body, guard);
}
