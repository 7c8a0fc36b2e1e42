import { checkScheduler, type EffectiveScheduler } from '../catalog/catalog.js';
import { isRefusal } from '../errors/index.js';
import { schedulerPath } from '../scheduler/document.js';
import { TENANT_PROJECT } from '../store/document-rows.js';
import type { Repositories } from '../store/index.js';
import type { Run } from '../store/runs.js';

/**
 * The scheduler a run of a worker fires with now (a run taken over from a lost worker, or one of
 * its own that no dispatch carries any more): its document as the schedule state's source says
 * (the project's, or `_tenant`'s), checked for the run's project.
 *
 * Undefined only when the store answered that there is none to start: no such document, or a
 * document Ursa refuses (invalid, an unknown recipe, workflow or user: an `input` or `state`
 * error). The caller may then end the run.
 *
 * @throws every other error unchanged — a store that is busy or cannot be reached
 *   (`STORE_BUSY`, `STORE_UNAVAILABLE`), anything not Ursa's own refusal: nothing is known about
 *   the document then, so the caller leaves the run as it is and looks again at its next pass
 *   (issue #20).
 */
export async function schedulerOfRun(
  repos: Repositories,
  run: Pick<Run, 'tenant' | 'project' | 'name'>,
): Promise<EffectiveScheduler | undefined> {
  const state = await repos.schedules.get(run);
  const source = state?.source ?? 'project';
  const project = source === 'tenant' ? TENANT_PROJECT : run.project;
  const document = await repos.documents.get({ tenant: run.tenant, project, path: schedulerPath(run.name) });
  if (document === undefined) return undefined;
  try {
    return { ...(await checkScheduler(repos, run.project, document)), document, source };
  } catch (error) {
    if (!isRefusal(error)) throw error;
    return undefined;
  }
}
