import { isMap, parseDocument } from 'yaml';
import { type EffectiveScheduler, type LoadFailure, loadProjectSchedulers } from '../catalog/catalog.js';
import type { Bounds, Pause, SchedulerDetail, SchedulerList, SchedulerSummary } from '../contract/index.js';
import { boundsSpent, isBounded } from '../decisions/bounds.js';
import { isOverdue } from '../decisions/overdue.js';
import type { Runtime } from '../runtime/context.js';
import type { ScheduleBounds } from '../scheduler/definition.js';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from '../store/document-rows.js';
import type { SchedulerKey, ScheduleState } from '../store/schedules.js';
import { formatInstant } from '../time/instant.js';
import { lastRunView } from './last-run.js';
import { schedulerMissing } from './missing.js';
import { pausesOf, pauseView } from './pauses.js';
import { definitionFields } from './views.js';
import { workerRunning } from './workers.js';

/**
 * The cascade-resolved schedulers of a project (spec §3: its own documents, else `_tenant`'s), the
 * documents that could not be loaded, and the schedule state of each registered name (its
 * `nextRunAt`, UTC epoch ms or null), by name. Lock modes are not applied.
 *
 * @throws the store's errors (`STORE_BUSY`, `STORE_UNAVAILABLE`, …); a broken document is a
 *   failure in the result, never thrown.
 */
export async function loadSchedulersWithState(
  rt: Pick<Runtime, 'repos'>,
  tenant: string,
  project: string,
): Promise<{
  schedulers: Map<string, EffectiveScheduler>;
  failures: LoadFailure[];
  states: Map<string, ScheduleState>;
}> {
  const { repos } = rt;
  const { schedulers, failures } = await loadProjectSchedulers(repos, tenant, project);
  const states = new Map((await repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
  return { schedulers, failures, states };
}

/**
 * The schedulers of a project, sorted by name, with their next run (schedule state) and last run
 * (activity feed; spec §7 "last run"), and the documents that could not be loaded, as the REST
 * contract's `SchedulerList` (instants ISO-8601 UTC). One listing for the REST API and
 * the CLI's local client, so both answer alike; lock modes are not applied (spec §10b: people see all).
 * With `all`, also the project's fired one-shots, which left the list (spec §10a, issue #23).
 */
export async function listSchedulers(
  rt: Runtime,
  tenant: string,
  project: string,
  options: { readonly all?: boolean } = {},
): Promise<SchedulerList> {
  const { schedulers, failures, states } = await loadSchedulersWithState(rt, tenant, project);
  const pauseOf = await pausesOf(rt, tenant, project);
  const live = await workerRunning(rt);
  const list: SchedulerSummary[] = [];
  for (const [name, s] of [...schedulers].sort(([a], [b]) => (a < b ? -1 : 1))) {
    list.push(await summaryOf(rt, { tenant, project, name }, s, states.get(name), pauseOf(s), live));
  }
  const invalid = failures.map((f) => ({ path: f.path, message: f.message }));
  if (!options.all) return { schedulers: list, invalid };
  const fired = await rt.repos.projects.fired(tenant, project, { limit: FIRED_LISTED });
  return {
    schedulers: list,
    invalid,
    fired: fired.map((f) => ({
      name: f.name,
      at: formatInstant(f.at),
      firedAt: formatInstant(f.firedAt),
      correlationId: f.correlationId,
      trashPath: f.trashPath,
    })),
  };
}

/** How many fired one-shots a listing with `all` shows, the newest first. */
const FIRED_LISTED = 100;

/**
 * One scheduler of a project's listing (`SchedulerSummary`): its definition's fields, its next run
 * (from its schedule state) and whether it is overdue (in the past while no worker is live,
 * `workerLive` from {@link workerRunning}: nothing will start it, issue #23), its last run (the
 * feed's newest line), its pause and its bounds.
 *
 * @throws the store's errors.
 */
export async function summaryOf(
  rt: Runtime,
  key: SchedulerKey,
  s: EffectiveScheduler,
  state: ScheduleState | undefined,
  paused: Pause | null,
  workerLive: boolean,
): Promise<SchedulerSummary> {
  const d = s.definition;
  const last = await rt.repos.feed.latestForRef(key.tenant, key.project, 'SCHEDULER', key.name);
  const next = state?.nextRunAt ?? null;
  return {
    name: key.name,
    ...definitionFields(d),
    overlap: d.overlap,
    lockMode: d.lockMode,
    tags: [...d.tags],
    source: s.source,
    nextRunAt: next === null ? null : formatInstant(next),
    overdue: isOverdue(next, rt.clock.now(), workerLive),
    lastRun: last === undefined ? null : await lastRunView(rt, last),
    paused,
    bounds: await boundsView(rt, key, d.bounds),
  };
}

/**
 * One scheduler document of a project, or the tenant-wide one of that name (spec §3 cascade), with
 * its next run: `GET …/scheduler/:name` and the CLI's `scheduler get`. `version` is the project's
 * own document's version when `source` is `project` (the ETag a conditional write compares).
 *
 * @throws UrsaError `NOT_FOUND` when neither the project nor `_tenant` has it (the message names
 *   both; REST replaces it by its uniform answer).
 */
export async function getSchedulerDetail(
  rt: Runtime,
  tenant: string,
  project: string,
  name: string,
): Promise<SchedulerDetail> {
  const { repos } = rt;
  const path = schedulerPath(name);
  const own = await repos.documents.get({ tenant, project, path });
  const doc = own ?? (await repos.documents.get({ tenant, project: TENANT_PROJECT, path }));
  if (doc === undefined) throw await schedulerMissing(rt, tenant, project, name);
  const next = (await repos.schedules.get({ tenant, project, name }))?.nextRunAt ?? null;
  const pause = disabled(doc.body) ? await repos.pauses.get(doc) : undefined;
  return {
    name,
    path: doc.path,
    source: own === undefined ? 'tenant' : 'project',
    version: doc.version,
    yaml: doc.body,
    createdBy: doc.createdBy,
    updatedAt: formatInstant(doc.updatedAt),
    nextRunAt: next === null ? null : formatInstant(next),
    paused: pause === undefined ? null : pauseView(pause),
  };
}

// Whether a scheduler document, valid or not, says `enabled: false` (read without building it).
function disabled(body: string): boolean {
  const doc = parseDocument(body);
  return doc.errors.length === 0 && isMap(doc.contents) && doc.get('enabled') === false;
}

/** A scheduler's bounds as the contract shows them (`Bounds`), null when it has none (issue #22). */
async function boundsView(rt: Runtime, key: SchedulerKey, bounds: ScheduleBounds): Promise<Bounds | null> {
  if (!isBounded(bounds)) return null;
  const runsStarted = bounds.maxRuns === undefined ? null : await rt.repos.runs.started(key);
  const instant = (value: number | undefined) => (value === undefined ? null : formatInstant(value));
  return {
    startAt: instant(bounds.startAt),
    endAt: instant(bounds.endAt),
    maxRuns: bounds.maxRuns ?? null,
    runsStarted,
    finished: boundsSpent(bounds, rt.clock.now(), runsStarted ?? 0) ?? null,
  };
}
