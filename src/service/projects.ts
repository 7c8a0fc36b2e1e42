import type { Runtime } from '../runtime/context.js';

/**
 * Suspends (`suspended` true) or resumes a project at the runtime's now (spec §3): a suspended
 * project is not active, whatever it holds. The caller refreshes the project afterwards.
 * (Pinning is the `lifecycleType` setting: `setSetting` in settings.ts.)
 */
export function setProjectSuspended(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  tenant: string,
  project: string,
  suspended: boolean,
): Promise<void> {
  return rt.repos.projects.setSuspended(tenant, project, suspended, rt.clock.now());
}
