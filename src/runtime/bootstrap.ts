import { activeProjects, projectSchedulerHeads } from '../catalog/catalog.js';
import { SCHEDULER_PREFIX } from '../scheduler/document.js';
import { type DocumentHead, TENANT_PROJECT } from '../store/document-rows.js';
import type { Runtime } from './context.js';
import { isCronTiming, reconcileProject, refreshProject } from './registrar.js';

/** What a worker's start-up refresh did (spec §8 bootstrap), in counts. */
export interface BootstrapResult {
  /** Active projects refreshed. */
  readonly projects: number;
  /** Projects unloaded (not active any more: their state was removed). */
  readonly unloaded: number;
  /** Scheduler documents found in the active projects, after the cascade. */
  readonly schedulers: number;
  /** Documents read and checked: new, changed, one-shots, and states left without a document. */
  readonly checked: number;
  /** Documents that failed their check (each logged and sent to its author's inbox). */
  readonly failures: number;
}

/**
 * The start-up refresh of a worker (spec §8 bootstrap, issue #11): every active project is brought
 * in line with its documents and every loaded project that is not active any more is unloaded, as
 * `refreshAll` does, but without reading the body of a document that cannot have changed: a cron
 * scheduler whose state was written from the same document (same source and version) keeps its
 * state unread. Such a document was valid when its state was written; whether its recipe, workflow
 * and user still resolve is checked when it falls due (the tick's cache fills it, and a failed
 * fill refreshes its project in full, reporting the document). Everything else is read and
 * checked as a refresh checks it: new and changed documents (re-planned), one-shots (spec §10a:
 * a fired one heals), states with a legacy timing, and states whose document is gone (removed).
 * Invalid documents are reported as any refresh reports them. Per project: two reads of
 * heads (no bodies; `_tenant`'s once per tenant) and one of states, then bodies only where needed.
 */
export async function bootstrapProjects(rt: Runtime): Promise<BootstrapResult> {
  const { repos } = rt;
  // One registration instant for the whole start-up (decisions §5: tenant one-shots).
  const asOf = rt.clock.now();
  const active = new Map<string, { tenant: string; project: string }>();
  for (const p of await activeProjects(repos)) active.set(`${p.tenant}\u0000${p.project}`, p);
  const loaded = (await repos.schedules.loadedProjects()).filter(
    (p) => p.project !== TENANT_PROJECT && !active.has(`${p.tenant}\u0000${p.project}`),
  );
  let unloaded = 0;
  // Not active when listed: refreshProject looks again (a document may have arrived since).
  for (const { tenant, project } of loaded)
    if (!(await refreshProject(rt, tenant, project, undefined, { asOf })).active) unloaded++;

  const sharedHeads = new Map<string, readonly DocumentHead[]>();
  let schedulers = 0;
  let checked = 0;
  let failures = 0;
  for (const { tenant, project } of active.values()) {
    let shared = sharedHeads.get(tenant);
    if (shared === undefined) {
      shared = await repos.documents.heads(tenant, TENANT_PROJECT, SCHEDULER_PREFIX);
      sharedHeads.set(tenant, shared);
    }
    const heads = await projectSchedulerHeads(repos, tenant, project, shared);
    const states = new Map((await repos.schedules.list(tenant, project)).map((s) => [s.name, s]));
    const names = new Set<string>();
    for (const [name, { document, source }] of heads) {
      const state = states.get(name);
      const unchanged =
        state !== undefined &&
        state.source === source &&
        state.documentVersion === document.version &&
        isCronTiming(state.timing);
      if (!unchanged) names.add(name);
    }
    for (const name of states.keys()) if (!heads.has(name)) names.add(name);
    schedulers += heads.size;
    checked += names.size;
    if (names.size === 0) continue;
    failures += (await reconcileProject(rt, tenant, project, { read: names, states, asOf })).failures.length;
  }
  const result = { projects: active.size, unloaded, schedulers, checked, failures };
  rt.log.info({ bootstrap: result }, 'bootstrap refreshed every project');
  return result;
}
