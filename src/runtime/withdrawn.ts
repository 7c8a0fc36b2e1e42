import { WITHDRAWN } from '../decisions/admission.js';
import { schedulerPath } from '../scheduler/paths.js';
import { TENANT_PROJECT } from '../store/document-rows.js';
import type { Run } from '../store/runs.js';
import { isDisabledTiming } from '../store/schedules.js';
import type { Runtime } from './context.js';
import type { RunRecorder } from './recorder.js';

/**
 * Whether a scheduled run's schedule state says its scheduler was deleted (no state) or disabled
 * since its claim: its lane will not start it (`decideAdmission`), so nothing is prepared for it.
 * Always false for a manual fire (its lane looks at the document).
 */
export async function scheduleWithdrawn(rt: Runtime, run: Run): Promise<boolean> {
  if (run.trigger === 'manual') return false;
  const state = await rt.repos.schedules.get(run);
  return state === undefined || isDisabledTiming(state.timing);
}

/**
 * A queued run (held by `workerId`) whose scheduler no longer loads, at its turn: when the
 * scheduler's document is gone, in the project and in `_tenant`, the run is recorded skipped
 * (outcome `skipped_deleted`, reason `scheduler-deleted`, issue #20) instead of waiting for a
 * scheduler that will not come back. A document that is there but broken leaves it waiting (a
 * fixed document starts it).
 *
 * @returns whether the run was skipped here.
 */
export async function skipQueuedOfDeleted(
  rt: Runtime,
  recorder: RunRecorder,
  run: Run,
  workerId: string,
): Promise<boolean> {
  const { repos, clock } = rt;
  const path = schedulerPath(run.name);
  for (const project of new Set([run.project, TENANT_PROJECT]))
    if ((await repos.documents.get({ tenant: run.tenant, project, path })) !== undefined) return false;
  const at = clock.now();
  const { outcome, reason } = WITHDRAWN.deleted;
  const values = { state: 'skipped', outcome, reason, ended_at: at };
  if (!(await repos.runs.transition(run.correlationId, 'queued', values, workerId))) return false;
  await recorder.recordSkipped({ ...run, workerId, state: 'skipped', outcome, reason, endedAt: at });
  return true;
}
