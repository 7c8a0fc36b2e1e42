import { isMap, isScalar, type Pair, parseDocument, Scalar } from 'yaml';
import { checkScheduler } from '../catalog/catalog.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { refreshProject, refreshTenant } from '../runtime/registrar.js';
import { parseSchedulerDocument } from '../scheduler/document.js';
import { validateName } from '../scheduler/name.js';
import { schedulerPath } from '../scheduler/paths.js';
import { type DocumentKey, type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import { checkWrite, type WriteGuard } from '../store/document-versions.js';
import { MAX_DOCUMENT_BYTES } from '../yaml/limits.js';
import { actorOf, type Caller, type VersionGuard } from './caller.js';
import { displayTimezone } from './settings.js';

/** What a scheduler write did. */
export interface SetResult {
  /** The document path, `_vance/scheduler/<name>.yaml`. */
  readonly path: string;
  readonly created: boolean;
  readonly version: number;
  /** E.g. that a `_tenant` scheduler fires only in active projects (spec §3). */
  readonly warnings: readonly string[];
  /** The zone written into the document because it had none (spec §10c), if any. */
  readonly filledTimezone: string | undefined;
}

/** The warning of a write of a workflow scheduler while the operator switched workflows off (issue #10). */
export const WORKFLOWS_OFF_WARNING =
  'workflows are switched off by the operator (workflows: false): each fire of this scheduler will be recorded as failed';

export const TENANT_WRITE_WARNING =
  'a scheduler in _tenant fires only in active projects (those with scheduler documents of their own or pinned with lifecycleType PERMANENT), never in sleeping ones';

function timezoneIsMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/**
 * Writes `timezone: <zone>` into a scheduler document that has none (spec §10c), through the
 * `yaml` Document API — never a string edit — so the author's comments, key order and
 * formatting stay: the key goes right after `cron`/`at` (or replaces an empty `timezone:`).
 * Returns the text unchanged when the document names a zone.
 */
export function fillTimezone(text: string, zone: string): string {
  const doc = parseDocument(text);
  const map = doc.contents;
  if (!isMap(map)) return text;
  const items = map.items as Pair[];
  const keyIs = (pair: Pair, name: string) => (isScalar(pair.key) ? pair.key.value : pair.key) === name;
  const existing = items.find((pair) => keyIs(pair, 'timezone'));
  if (existing !== undefined) {
    const value = isScalar(existing.value) ? existing.value.value : existing.value;
    if (!timezoneIsMissing(value)) return text;
    existing.value = new Scalar(zone);
  } else {
    const after = items.findIndex((pair) => keyIs(pair, 'cron') || keyIs(pair, 'at'));
    const pair = doc.createPair('timezone', zone) as Pair;
    items.splice(after === -1 ? items.length : after + 1, 0, pair);
  }
  return doc.toString({ lineWidth: 0 });
}

/**
 * Without runAs a scheduler runs as its document's creator (spec §2), who stays the creator when
 * another user replaces it: a non-admin may not leave it running as someone else that way
 * (decisions §6). `current` is the stored document (undefined: none) as the write sees it.
 *
 * @throws UrsaError `FORBIDDEN` naming the creator and what to write instead.
 */
function keepsRunningAsCreator(
  caller: Caller,
  source: string,
  runAs: string | undefined,
  current: StoredDocument | undefined,
): void {
  if (runAs !== undefined || caller.role === 'admin' || current === undefined) return;
  const creator = current.createdBy;
  if (creator === caller.user) return;
  const message = `is missing, so the scheduler would keep running as ${creator}, who created it; only an admin may make it run as another user than the caller (${caller.user}): write runAs: ${caller.user}`;
  throw new UrsaError('FORBIDDEN', `${source}: runAs: ${message}`, {
    field: 'runAs',
    value: creator,
    allowed: caller.user,
    issues: [{ path: 'runAs', message }],
  });
}

/**
 * Creates or replaces the scheduler `name` of the caller's project (spec §9 `scheduler_set`,
 * issue #6): validates the document (decisions §6 limits, spec §2 schema, recipe and `runAs`
 * exist), fills a missing `timezone` with the caller's display zone (spec §10c), writes it (the
 * replaced body goes to the archive) and refreshes that scheduler. Nothing is written when any
 * check fails.
 *
 * @throws UrsaError `NAME_INVALID`, `DOCUMENT_INVALID` (also when the filled-in timezone would
 *   take the document over 64 KiB), `SCHEDULER_INVALID`, `RECIPE_NOT_FOUND`, `USER_NOT_FOUND`, or
 *   `FORBIDDEN` when a non-admin names another user as `runAs`, or leaves `runAs` out of a
 *   document another user created, which would keep it running as that user (decisions §6);
 *   `VERSION_MISMATCH` when `guard` expected another version than the stored one.
 *
 * The write is one transaction (issue #19): the creator rule and `guard` are checked on the
 * document as locked by it, so a concurrent create or replace by another user cannot slip past
 * them; the version is the stored one + 1, and the replaced body is archived once.
 */
export async function setScheduler(
  rt: Runtime,
  caller: Caller,
  name: string,
  yaml: string,
  guard: VersionGuard = {},
): Promise<SetResult> {
  const { repos, clock } = rt;
  validateName(name, 'scheduler name');
  const path = schedulerPath(name);
  const source = `${caller.project}/${path}`;
  // The document as written must be valid before anything is added to it.
  const written = parseSchedulerDocument(yaml, { name, path: source });
  let body = yaml;
  let filledTimezone: string | undefined;
  if (written.timezone === undefined) {
    filledTimezone = await displayTimezone(repos, caller.tenant, caller.user);
    body = fillTimezone(yaml, filledTimezone);
  }
  if (written.runAs !== undefined && written.runAs !== caller.user && caller.role !== 'admin') {
    throw new UrsaError(
      'FORBIDDEN',
      `${source}: runAs: only an admin may name another user than the caller (${caller.user})`,
      {
        field: 'runAs',
        value: written.runAs,
        issues: [
          { path: 'runAs', message: `only an admin may name another user than the caller (${caller.user})` },
        ],
      },
    );
  }
  if (filledTimezone !== undefined && Buffer.byteLength(body, 'utf8') > MAX_DOCUMENT_BYTES) {
    const message = `the document is ${Buffer.byteLength(yaml, 'utf8')} bytes, and ${Buffer.byteLength(body, 'utf8')} with timezone: ${filledTimezone} filled in; the limit is ${MAX_DOCUMENT_BYTES} bytes (64 KiB): name the timezone and shorten the document`;
    throw new UrsaError('DOCUMENT_INVALID', `${source}: timezone: ${message}`, {
      field: 'timezone',
      value: Buffer.byteLength(body, 'utf8'),
      allowed: `at most ${MAX_DOCUMENT_BYTES} bytes with the timezone`,
      issues: [{ path: 'timezone', message }],
    });
  }
  const now = clock.now();
  const key = { tenant: caller.tenant, project: caller.project, path };
  const writeGuard: WriteGuard = {
    ...guard,
    check: (current) => {
      guard.check?.(current);
      keepsRunningAsCreator(caller, source, written.runAs, current);
    },
  };
  // A first look, to refuse before anything is written and to validate the document as it would
  // run; the guard is checked again on the row as locked by the write, which decides (issue #19).
  const existing = await repos.documents.get(key);
  checkWrite(key, existing, writeGuard);
  const candidate: StoredDocument = {
    ...key,
    body,
    createdBy: existing?.createdBy ?? caller.user,
    version: (existing?.version ?? 0) + 1,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    expiresAt: null,
  };
  // A tenant scheduler is checked as it would run: its recipe must resolve from _tenant or built in.
  const checked = await checkScheduler(repos, caller.project, candidate, caller.user);
  await repos.users.ensure(caller.tenant, caller.user, now);
  // A write that leaves the scheduler enabled ends its pause (the note goes with it); one that
  // keeps it disabled keeps the note, which only a pause writes.
  const pause = written.enabled && existing !== undefined ? { scheduler: name, note: null } : undefined;
  const { created, version } = await repos.documents.put(key, body, actorOf(caller), now, null, {
    ...writeGuard,
    ...(pause === undefined ? {} : { pause }),
  });
  const warnings: string[] = [];
  if (checked.workflow !== undefined && rt.settings.workflowsEnabled === false)
    warnings.push(WORKFLOWS_OFF_WARNING);
  if (caller.project === TENANT_PROJECT) {
    warnings.push(TENANT_WRITE_WARNING);
    rt.log.warn({ tenant: caller.tenant, scheduler: name }, TENANT_WRITE_WARNING);
  }
  await refreshWritten(rt, caller, name, now);
  return { path, created, version, warnings, filledTimezone };
}

/**
 * Takes up the scheduler `name` the caller just wrote (at `now`, UTC ms): its project's refresh,
 * or for a `_tenant` scheduler every project's of the tenant, as of the write, so that every
 * project active then takes up a one-shot written already due (decisions §5).
 */
export async function refreshWritten(rt: Runtime, caller: Caller, name: string, now: number): Promise<void> {
  if (caller.project === TENANT_PROJECT) await refreshTenant(rt, caller.tenant, { asOf: now });
  else await refreshProject(rt, caller.tenant, caller.project, name);
}

/**
 * Deletes the scheduler `name` of the caller's project (spec §9 `scheduler_delete`): its
 * document goes to the trash (restorable), its schedule is cancelled by a refresh, and its
 * system sessions are archived (spec §6).
 *
 * The move is recorded in the audit trail as the caller's delete (issue #19).
 *
 * @throws UrsaError `NOT_FOUND` when the project has no such scheduler document;
 *   `VERSION_MISMATCH` when `guard` expected another version (a missing document included).
 */
export async function deleteScheduler(
  rt: Runtime,
  caller: Caller,
  name: string,
  guard: VersionGuard = {},
): Promise<{ trashPath: string }> {
  const { repos, clock } = rt;
  validateName(name, 'scheduler name');
  const key: DocumentKey = { tenant: caller.tenant, project: caller.project, path: schedulerPath(name) };
  const trashPath = await repos.documents.trash(key, clock.now(), { ...guard, actor: actorOf(caller) });
  if (trashPath === undefined) {
    throw new UrsaError(
      'NOT_FOUND',
      `scheduler ${JSON.stringify(name)} does not exist in ${caller.tenant}/${caller.project}`,
      {
        field: 'name',
        value: name,
      },
    );
  }
  if (caller.project === TENANT_PROJECT) {
    await refreshTenant(rt, caller.tenant);
  } else {
    await refreshProject(rt, caller.tenant, caller.project);
    await repos.sessions.archiveSchedulerSessions(caller.tenant, caller.project, name);
  }
  return { trashPath };
}
