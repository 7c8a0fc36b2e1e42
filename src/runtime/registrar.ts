import { firstRunAt } from '../decisions/advance.js';
import { activeProjects, type LoadFailure, loadProjectSchedulers } from './catalog.js';
import type { Runtime } from './context.js';

/** What a refresh did. */
export interface RefreshResult {
  /** Schedulers that fire in the project, by name. */
  readonly registered: readonly string[];
  /** Documents that could not be loaded (each names the document, field path and reason). */
  readonly failures: readonly LoadFailure[];
}

/**
 * Brings the persisted schedule state of one project in line with its scheduler documents
 * (spec §8 refresh): new or changed schedulers wait for their first occurrence after now,
 * unchanged ones keep theirs (so a backlog survives a restart and is coalesced, decisions §4),
 * disabled ones wait for nothing, and state without a valid document is removed.
 */
export async function refreshProject(rt: Runtime, tenant: string, project: string): Promise<RefreshResult> {
  const now = rt.clock.now();
  const { schedulers, failures } = await loadProjectSchedulers(rt.repos, tenant, project);
  const states = new Map((await rt.repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
  let changed = false;
  for (const [name, effective] of schedulers) {
    const state = states.get(name);
    const unchanged =
      state?.source === effective.source && state.documentVersion === effective.document.version;
    if (unchanged) continue;
    changed = true;
    await rt.repos.schedules.upsert(
      {
        tenant,
        project,
        name,
        source: effective.source,
        documentVersion: effective.document.version,
        nextRunAt: effective.definition.enabled ? firstRunAt(effective.definition, now) : null,
        lastScheduledAt: state?.lastScheduledAt ?? null,
      },
      now,
    );
  }
  for (const name of states.keys()) {
    if (!schedulers.has(name)) {
      await rt.repos.schedules.remove({ tenant, project, name });
      changed = true;
    }
  }
  // Wake every worker of the store: its earliest due instant may have moved (decisions §5).
  if (changed) await rt.repos.store.notifyChange();
  for (const failure of failures) {
    rt.log.warn({ tenant, project, document: failure.path, issues: failure.issues }, failure.message);
  }
  return { registered: [...schedulers.keys()], failures };
}

/** Refreshes every active project (bootstrap at start, spec §8). */
export async function refreshAll(rt: Runtime): Promise<RefreshResult[]> {
  const results: RefreshResult[] = [];
  for (const { tenant, project } of await activeProjects(rt.repos)) {
    results.push(await refreshProject(rt, tenant, project));
  }
  return results;
}
