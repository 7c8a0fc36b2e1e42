import {
  activeProjects,
  type EffectiveScheduler,
  isProjectActive,
  type LoadFailure,
  loadProjectSchedulers,
} from '../catalog/catalog.js';
import { firstRunAt } from '../decisions/advance.js';
import { isBounded, maxRunsSpent } from '../decisions/bounds.js';
import type { SchedulerDefinition } from '../scheduler/definition.js';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from '../store/document-rows.js';
import type { LaneRequest } from '../store/lane-records.js';
import type { SchedulerKey, ScheduleState } from '../store/schedules.js';
import type { Runtime } from './context.js';
import { noteTenantOneShots, takesUp } from './tenant-one-shots.js';

/** What a refresh did. */
export interface RefreshResult {
  readonly tenant: string;
  readonly project: string;
  /** False when the project is not active (spec §3): it was unloaded. */
  readonly active: boolean;
  /** Schedulers that fire in the project, by name. */
  readonly registered: readonly string[];
  /** Documents that could not be loaded (each names the document, field path and reason). */
  readonly failures: readonly LoadFailure[];
}

/**
 * What a schedule's `nextRunAt` depends on: the trigger, the zone, whether it is enabled, and its
 * bounds (issue #22: a changed `maxRuns` registers it afresh, so raising it lets a spent scheduler
 * fire again). A refresh that changes none of these (a new description, say) keeps the state
 * (issue #6).
 */
export function timingOf(definition: SchedulerDefinition): string {
  const { trigger, bounds } = definition;
  const when = trigger.kind === 'cron' ? { cron: trigger.cron.normalized } : { at: trigger.instant };
  return JSON.stringify({
    ...when,
    zone: definition.zone.id,
    enabled: definition.enabled,
    startAt: bounds.startAt,
    endAt: bounds.endAt,
    maxRuns: bounds.maxRuns,
  });
}

/** What a lane needs of a scheduler's bounds (issue #22); undefined when it has none. */
export function laneBounds(definition: SchedulerDefinition): LaneRequest['bounds'] {
  return isBounded(definition.bounds)
    ? { limits: definition.bounds, timing: timingOf(definition) }
    : undefined;
}

/**
 * The first occurrence a scheduler (re)registered at `now` waits for (decisions §4): none while
 * disabled or once its `maxRuns` is spent (issue #22; counted in the store), else `firstRunAt`.
 */
async function nextRunOf(
  rt: Runtime,
  key: SchedulerKey,
  definition: SchedulerDefinition,
  now: number,
): Promise<number | null> {
  if (!definition.enabled) return null;
  if (definition.bounds.maxRuns !== undefined)
    if (maxRunsSpent(definition.bounds, await rt.repos.runs.started(key))) return null;
  return firstRunAt(definition, now);
}

/**
 * Whether a stored {@link timingOf} is a cron trigger's (a one-shot's starts `{"at"`): a cron
 * document unchanged since its state was written needs no check at bootstrap (issue #11).
 */
export function isCronTiming(timing: string | null): boolean {
  return timing?.startsWith('{"cron"') === true;
}

/**
 * Where a one-shot's occurrence stands (spec §10a): `fired` (marker, or a run that left `claimed`
 * and entered its engine, or may have), `claimed` (its run is claimed, or started with its
 * process never entered), `open` (no marker and no run: never claimed,
 * or released after a refused start); `cron` for a cron scheduler.
 */
type OneShotStanding = 'fired' | 'claimed' | 'open' | 'cron';

// spec §10a self-healing: a one-shot whose occurrence already ran (marker, or its run row after a
// crash before the marker) is marked and moved to the trash instead of registered again.
async function healFiredOneShot(
  rt: Runtime,
  tenant: string,
  project: string,
  name: string,
  effective: EffectiveScheduler,
): Promise<OneShotStanding> {
  const { trigger } = effective.definition;
  if (trigger.kind !== 'at') return 'cron';
  const { repos, clock } = rt;
  if (!(await repos.projects.hasFired(tenant, project, name, trigger.instant))) {
    const run = await repos.runs.forOccurrence({ tenant, project, name }, trigger.instant);
    if (run === undefined) return 'open';
    // Claimed, or started and not entered yet (its process still `ready`): it may still be
    // released unused; its worker, or the reap that finds it lost, decides.
    if (run.state === 'claimed') return 'claimed';
    if (run.state === 'started' && run.processId !== null)
      if ((await repos.processes.get(run.processId))?.status === 'ready') return 'claimed';
    await repos.projects.markFired(tenant, project, name, trigger.instant, run.correlationId, clock.now());
  }
  if (effective.source === 'project') {
    await repos.documents.trash({ tenant, project, path: schedulerPath(name) }, clock.now());
  }
  rt.log.info({ tenant, project, scheduler: name }, 'one-shot already fired: moved to the trash');
  return 'fired';
}

// Spec §8: a document that fails validation is logged and sent to its author's inbox, once per version.
async function reportFailure(rt: Runtime, failure: LoadFailure): Promise<void> {
  rt.log.warn(
    { tenant: failure.tenant, project: failure.project, document: failure.path, issues: failure.issues },
    failure.message,
  );
  const { repos, clock } = rt;
  const title = `${failure.project}/${failure.path} (version ${failure.version}) is invalid`;
  if (await repos.inbox.exists(failure.tenant, failure.createdBy, 'document-invalid', title)) return;
  await repos.inbox.add({
    tenant: failure.tenant,
    user: failure.createdBy,
    kind: 'document-invalid',
    title,
    body: failure.issues.map((i) => `${i.path === '' ? '' : `${i.path}: `}${i.message}`).join('\n'),
    project: failure.project,
    scheduler: failure.name,
    logPath: failure.path,
    createdAt: clock.now(),
  });
}

/**
 * Brings the persisted schedule state of one project in line with its scheduler documents
 * (spec §8 refresh). A project that is not active (spec §3) is unloaded: its state is removed.
 * In an active one, new schedulers and those whose timing changed wait for their first occurrence
 * after now; unchanged ones keep their state (so a backlog survives a restart and is coalesced,
 * decisions §4); fired one-shots heal (spec §10a); state without a valid document is removed; every
 * invalid document goes to its author's inbox. `only` limits the refresh to one scheduler (delta),
 * unless the project was not loaded (no state): then it has just become active and every scheduler
 * that fires in it is registered, the `_tenant` ones too (spec §3).
 *
 * @throws a store error; one met while reading or checking the scheduler documents comes before
 *   anything is written: the states stay as they were and no inbox hears of it (issue #20).
 */
export async function refreshProject(
  rt: Runtime,
  tenant: string,
  project: string,
  only?: string,
  pass: RegistrationPass = {},
): Promise<RefreshResult> {
  const { repos } = rt;
  if (!(await isProjectActive(repos, tenant, project))) {
    const removed = await repos.schedules.removeProject(tenant, project);
    if (removed > 0) {
      rt.log.info({ tenant, project, removed }, 'project unloaded');
      await repos.store.notifyChange();
    }
    return { tenant, project, active: false, registered: [], failures: [] };
  }
  if (only === undefined) return reconcileProject(rt, tenant, project, pass);
  // A delta refresh acts on one scheduler; its result still lists the whole project. A project
  // with no state is not loaded: it has just become active (its first own scheduler), so every
  // scheduler that fires in it, the tenant's included, is registered now (spec §3).
  const states = new Map((await repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
  return reconcileProject(rt, tenant, project, {
    ...pass,
    act: states.size === 0 ? undefined : new Set([only]),
    states,
  });
}

/** The instant of a registration pass (one refresh, or a tenant-wide one over many projects). */
export interface RegistrationPass {
  /**
   * UTC epoch ms the pass registers as of (default: the clock when it starts): the write that
   * caused it, when there was one. A `_tenant` one-shot is taken up only by passes not later
   * than the instant it falls due (decisions §5).
   */
  readonly asOf?: number | undefined;
}

/**
 * Whether a one-shot's state waits for nothing although it is enabled: its occurrence was claimed
 * (the claim leaves no next occurrence) and, being `open`, released again after a refused start.
 */
function parked(state: ScheduleState, effective: EffectiveScheduler): boolean {
  return (
    state.nextRunAt === null && effective.definition.enabled && effective.definition.trigger.kind === 'at'
  );
}

/** Which schedulers {@link reconcileProject} reads and which it reconciles. */
export interface ReconcileScope extends RegistrationPass {
  /** Read and check only these (all of the project when missing); the result lists what was read. */
  readonly read?: ReadonlySet<string> | undefined;
  /** Reconcile state and report failures only for these (all that were read when missing). */
  readonly act?: ReadonlySet<string> | undefined;
  /** The project's states, when the caller has read them already. */
  readonly states?: ReadonlyMap<string, ScheduleState> | undefined;
}

/**
 * The refresh of {@link refreshProject} in a project known to be active: reads and checks the
 * scheduler documents of `scope.read`, and for those of `scope.act` writes the state (new or
 * changed timing re-planned from now, one-shots healed, state without a valid document removed)
 * and reports invalid documents to their authors. The result's `registered` and `failures` cover
 * every document read.
 */
export async function reconcileProject(
  rt: Runtime,
  tenant: string,
  project: string,
  scope: ReconcileScope = {},
): Promise<RefreshResult> {
  const names = scope.act ?? scope.read;
  const { states } = scope;
  const { repos, clock } = rt;
  const now = clock.now();
  const asOf = scope.asOf ?? now;
  const { schedulers, failures } = await loadProjectSchedulers(repos, tenant, project, scope.read);
  const stateOf = states ?? new Map((await repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
  let changed = false;
  for (const [name, effective] of schedulers) {
    if (names !== undefined && !names.has(name)) continue;
    const state = stateOf.get(name);
    const standing = await healFiredOneShot(rt, tenant, project, name, effective);
    if (standing === 'fired') {
      if (state !== undefined) await repos.schedules.remove({ tenant, project, name });
      schedulers.delete(name);
      changed = true;
      continue;
    }
    const timing = timingOf(effective.definition);
    const sameDocument =
      state?.source === effective.source && state.documentVersion === effective.document.version;
    if (state?.timing === timing && standing === 'open' && parked(state, effective)) {
      // A one-shot released after a refused start (spec §10a): this refresh tries it again.
      await repos.schedules.upsert(
        {
          ...state,
          source: effective.source,
          documentVersion: effective.document.version,
          nextRunAt: firstRunAt(effective.definition, now),
        },
        now,
      );
      changed = true;
      continue;
    }
    if (sameDocument && state?.timing === timing) continue;
    if (state !== undefined && state.timing === timing) {
      changed = true;
      await repos.schedules.touch(
        { tenant, project, name },
        effective.source,
        effective.document.version,
        timing,
        now,
      );
      continue;
    }
    if (!(await takesUp(rt, tenant, name, effective, asOf))) {
      // A _tenant one-shot that fell due before this project took it up: not a catch-up here.
      if (state !== undefined) {
        await repos.schedules.remove({ tenant, project, name });
        changed = true;
      }
      schedulers.delete(name);
      rt.log.info(
        { tenant, project, scheduler: name },
        'tenant one-shot fell due before this project became active: it does not run here',
      );
      continue;
    }
    changed = true;
    await repos.schedules.upsert(
      {
        tenant,
        project,
        name,
        source: effective.source,
        documentVersion: effective.document.version,
        nextRunAt: await nextRunOf(rt, { tenant, project, name }, effective.definition, now),
        lastScheduledAt: state?.lastScheduledAt ?? null,
        timing,
      },
      now,
    );
  }
  for (const name of stateOf.keys()) {
    if ((names === undefined || names.has(name)) && !schedulers.has(name)) {
      await repos.schedules.remove({ tenant, project, name });
      changed = true;
    }
  }
  // Wake every worker of the store: its earliest due instant may have moved (decisions §5).
  if (changed) await repos.store.notifyChange();
  for (const failure of failures)
    if (names === undefined || names.has(failure.name)) await reportFailure(rt, failure);
  return { tenant, project, active: true, registered: [...schedulers.keys()], failures };
}

/**
 * Refreshes every active project of a tenant (spec §8 tenant-wide refresh), and unloads inactive
 * ones. First records when Ursa first knew each `_tenant` one-shot (decisions §5), so that one
 * written while no project is active is not run later by a project that becomes active after it
 * fell due. Every project is registered as of one instant, `pass.asOf`.
 */
export async function refreshTenant(
  rt: Runtime,
  tenant: string,
  pass: RegistrationPass = {},
): Promise<RefreshResult[]> {
  const asOf = pass.asOf ?? rt.clock.now();
  await noteTenantOneShots(rt, tenant, asOf);
  return refreshProjects(rt, (p) => p.tenant === tenant, asOf);
}

/**
 * Refreshes every project that is active, checking every document, and unloads every loaded one
 * that is not (spec §8). A worker's start-up uses the lighter `bootstrapProjects` instead.
 */
export async function refreshAll(rt: Runtime): Promise<RefreshResult[]> {
  return refreshProjects(rt, () => true, rt.clock.now());
}

async function refreshProjects(
  rt: Runtime,
  include: (p: { tenant: string; project: string }) => boolean,
  asOf: number,
): Promise<RefreshResult[]> {
  const targets = new Map<string, { tenant: string; project: string }>();
  for (const p of [...(await activeProjects(rt.repos)), ...(await rt.repos.schedules.loadedProjects())]) {
    if (include(p) && p.project !== TENANT_PROJECT) targets.set(`${p.tenant}\u0000${p.project}`, p);
  }
  const results: RefreshResult[] = [];
  for (const { tenant, project } of targets.values())
    results.push(await refreshProject(rt, tenant, project, undefined, { asOf }));
  return results;
}
