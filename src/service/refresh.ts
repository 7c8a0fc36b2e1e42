import type { Runtime } from '../runtime/context.js';
import { type RefreshResult, refreshProject, refreshTenant } from '../runtime/registrar.js';
import type { Actor } from '../store/audit.js';
import { TENANT_PROJECT } from '../store/document-rows.js';

/**
 * A refresh of one project someone asked for (spec §8: REST, the `scheduler_refresh` tool,
 * `ursa refresh`), recorded in the audit trail as `by`'s once it ran (issue #19); `name` refreshes
 * only that scheduler. Ursa's own refreshes (after a write, at start) are not recorded.
 */
export async function refreshProjectAs(
  rt: Runtime,
  by: Actor,
  tenant: string,
  project: string,
  name?: string,
): Promise<RefreshResult> {
  const result = await refreshProject(rt, tenant, project, name);
  await rt.repos.audit.record({
    tenant,
    project,
    at: rt.clock.now(),
    subjectType: 'project',
    subject: '',
    action: 'refresh',
    actor: by,
    ...(name === undefined ? {} : { detail: { scheduler: name } }),
  });
  return result;
}

/** Like {@link refreshProjectAs} for every project of `tenant`: one audit row, under `_tenant`. */
export async function refreshTenantAs(rt: Runtime, by: Actor, tenant: string): Promise<RefreshResult[]> {
  const results = await refreshTenant(rt, tenant);
  await rt.repos.audit.record({
    tenant,
    project: TENANT_PROJECT,
    at: rt.clock.now(),
    subjectType: 'project',
    subject: '',
    action: 'refresh',
    actor: by,
    detail: { allProjects: true },
  });
  return results;
}
