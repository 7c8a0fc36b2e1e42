import { checkScheduler, type EffectiveScheduler } from '../catalog/catalog.js';
import { PAUSE_NOTE_MAX, type Pause, type PauseResult } from '../contract/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { parseSchedulerDocument } from '../scheduler/document.js';
import { withEnabled } from '../scheduler/enabled.js';
import { validateName } from '../scheduler/name.js';
import { schedulerPath } from '../scheduler/paths.js';
import { type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import { checkWrite } from '../store/document-versions.js';
import { type PauseNote, pauseKey } from '../store/pauses.js';
import { formatInstant } from '../time/instant.js';
import { actorOf, type Caller, type VersionGuard } from './caller.js';
import { refreshWritten } from './schedulers.js';

/**
 * Pauses the scheduler `name` of the caller's project (issue #22): writes `enabled: false` into
 * its document through the document path (versioned, the replaced body archived, audited as the
 * caller's), and, in the same transaction, the pause's note, the caller and the instant, which
 * list, get and describe show while it stays paused. Occurrences that fall in a pause are not
 * run; a manual fire is refused with the note. Pausing a paused scheduler replaces its note.
 * A `_tenant` scheduler paused in `_tenant` is paused in every project.
 *
 * @param note why, at most {@link PAUSE_NOTE_MAX} characters, one line ('' for none).
 * @throws UrsaError `ARGUMENT_INVALID` for a note too long or with control characters;
 *   `NAME_INVALID`; `NOT_FOUND` when neither the project nor `_tenant` has the scheduler;
 *   `SCHEDULER_INHERITED` when only `_tenant` has it; `SCHEDULER_INVALID` when its document does
 *   not load; `VERSION_MISMATCH` when `guard` expected another version.
 */
export async function pauseScheduler(
  rt: Runtime,
  caller: Caller,
  name: string,
  note = '',
  guard: VersionGuard = {},
): Promise<PauseResult> {
  checkNote(note);
  return setEnabled(rt, caller, name, false, { note, by: caller.user, at: rt.clock.now() }, guard);
}

/**
 * Resumes the scheduler `name` of the caller's project (issue #22): writes `enabled: true` into
 * its document (as {@link pauseScheduler} writes `false`) and clears its pause note. It fires
 * again from its next occurrence: what fell in the pause is not run. Resuming a scheduler that is
 * not paused changes nothing.
 *
 * @throws as {@link pauseScheduler}, but for the note.
 */
export function resumeScheduler(
  rt: Runtime,
  caller: Caller,
  name: string,
  guard: VersionGuard = {},
): Promise<PauseResult> {
  return setEnabled(rt, caller, name, true, null, guard);
}

async function setEnabled(
  rt: Runtime,
  caller: Caller,
  name: string,
  enabled: boolean,
  note: PauseNote | null,
  guard: VersionGuard,
): Promise<PauseResult> {
  const { repos, clock } = rt;
  validateName(name, 'scheduler name');
  const path = schedulerPath(name);
  const key = { tenant: caller.tenant, project: caller.project, path };
  const existing = await repos.documents.get(key);
  if (existing === undefined) throw await missing(rt, caller, name);
  checkWrite(key, existing, guard);
  const body = withEnabled(existing.body, enabled);
  const source = `${caller.project}/${path}`;
  // Only `enabled` changes, and the result must still be a scheduler that loads.
  parseSchedulerDocument(body, { name, path: source });
  const now = clock.now();
  const candidate: StoredDocument = { ...existing, body, version: existing.version + 1, updatedAt: now };
  await checkScheduler(repos, caller.project, candidate, caller.user);
  const { version } = await repos.documents.put(key, body, actorOf(caller), now, null, {
    ...guard,
    pause: { scheduler: name, note },
  });
  await refreshWritten(rt, caller, name, now);
  return { name, version, enabled, paused: note === null ? null : pauseView(note) };
}

/**
 * The pauses of the schedulers of a project's listing (its own and `_tenant`'s, one query): for
 * each scheduler as loaded, its pause when it is paused, else null. A note is shown only while
 * its document says `enabled: false`.
 */
export async function pausesOf(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
): Promise<(scheduler: EffectiveScheduler) => Pause | null> {
  const notes = await rt.repos.pauses.ofProjects(tenant, [project, TENANT_PROJECT]);
  return ({ definition, document }) => {
    const note = definition.enabled ? undefined : notes.get(pauseKey(document.project, document.path));
    return note === undefined ? null : pauseView(note);
  };
}

/** A pause note as the REST contract shows it (the instant ISO-8601 UTC). */
export function pauseView(note: PauseNote): Pause {
  return { note: note.note, by: note.by, at: formatInstant(note.at) };
}

// Why a pause or resume in this project finds no document of its own to write.
async function missing(rt: Runtime, caller: Caller, name: string): Promise<UrsaError> {
  const path = schedulerPath(name);
  const inherited =
    caller.project !== TENANT_PROJECT &&
    (await rt.repos.documents.get({ tenant: caller.tenant, project: TENANT_PROJECT, path })) !== undefined;
  if (inherited)
    return new UrsaError(
      'SCHEDULER_INHERITED',
      `scheduler ${JSON.stringify(name)} comes from ${TENANT_PROJECT}: pause or resume it there to do so in every project of ${caller.tenant}, or write a scheduler ${JSON.stringify(name)} in ${caller.project} (an override of it) to do so in ${caller.project} only`,
      { field: 'name', value: name },
    );
  return new UrsaError(
    'NOT_FOUND',
    `scheduler ${JSON.stringify(name)} does not exist in ${caller.tenant}/${caller.project}`,
    { field: 'name', value: name },
  );
}

// One line of printable text, within the limit: it is shown in lists and inbox items as is.
function checkNote(note: string): void {
  const problem =
    note.length > PAUSE_NOTE_MAX
      ? `is ${note.length} characters; at most ${PAUSE_NOTE_MAX} are allowed`
      : // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
        /[\u0000-\u001f\u007f]/.test(note)
        ? 'has a line break or another control character; one line of text is allowed'
        : undefined;
  if (problem === undefined) return;
  throw new UrsaError('ARGUMENT_INVALID', `note: ${problem}`, {
    field: 'note',
    value: note.length > 60 ? `${note.slice(0, 60)}…` : note,
    allowed: `one line of at most ${PAUSE_NOTE_MAX} characters`,
    issues: [{ path: 'note', message: problem }],
  });
}
