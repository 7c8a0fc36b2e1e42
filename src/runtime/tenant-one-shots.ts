import type { EffectiveScheduler } from '../catalog/catalog.js';
import { firstKnownAt, takesTenantOneShot } from '../decisions/tenant-one-shot.js';
import { UrsaError } from '../errors/index.js';
import { parseSchedulerDocument, SCHEDULER_PREFIX, schedulerNameFromPath } from '../scheduler/document.js';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from '../store/document-rows.js';
import type { Runtime } from './context.js';

/*
 * The shell of decisions §5 for `_tenant` one-shots (the decision is `decisions/tenant-one-shot.ts`):
 * when Ursa first knew each one is recorded per (tenant, name, `at:`), and a project registering
 * one consults it.
 */

/**
 * Whether a project registering `effective` (it holds no state for it, or one of another timing)
 * in a registration pass at `asOf` (UTC epoch ms) takes it up: always, but for an enabled
 * `_tenant` one-shot, which a project takes up only until it falls due (decisions §5). Records
 * when Ursa first knew that one-shot if nothing did before.
 */
export async function takesUp(
  rt: Runtime,
  tenant: string,
  name: string,
  effective: EffectiveScheduler,
  asOf: number,
): Promise<boolean> {
  const { trigger, enabled } = effective.definition;
  if (effective.source !== 'tenant' || trigger.kind !== 'at' || !enabled) return true;
  const { repos } = rt;
  let knownAt = await repos.projects.tenantOneShotKnownAt(tenant, name, trigger.instant);
  if (knownAt === undefined) {
    const document = await repos.documents.get({
      tenant,
      project: TENANT_PROJECT,
      path: schedulerPath(name),
    });
    knownAt = await repos.projects.knowTenantOneShot(
      tenant,
      name,
      trigger.instant,
      firstKnownAt(asOf, document?.updatedAt ?? asOf),
    );
  }
  return takesTenantOneShot(trigger.instant, knownAt, asOf);
}

/**
 * Records, for a registration pass over a whole tenant at `asOf` (UTC epoch ms: the write of its
 * scheduler documents, or a tenant-wide refresh), when Ursa first knew each enabled `_tenant`
 * one-shot — also when no project is active, so that one that becomes active later does not take
 * up a one-shot that fell due before it (decisions §5) — and forgets disabled ones (enabled again,
 * they fall due anew). Documents that do not parse are left to the refresh that reports them.
 */
export async function noteTenantOneShots(rt: Runtime, tenant: string, asOf: number): Promise<void> {
  const { repos } = rt;
  for (const document of await repos.documents.list(tenant, TENANT_PROJECT, SCHEDULER_PREFIX)) {
    const name = schedulerNameFromPath(document.path);
    let definition: ReturnType<typeof parseSchedulerDocument>;
    try {
      definition = parseSchedulerDocument(document.body, {
        name,
        path: `${TENANT_PROJECT}/${document.path}`,
      });
    } catch (error) {
      if (error instanceof UrsaError) continue;
      throw error;
    }
    const { trigger } = definition;
    if (trigger.kind !== 'at') continue;
    if (definition.enabled)
      await repos.projects.knowTenantOneShot(
        tenant,
        name,
        trigger.instant,
        firstKnownAt(asOf, document.updatedAt),
      );
    else await repos.projects.forgetTenantOneShot(tenant, name, trigger.instant);
  }
}
