import { failureStreakReached } from '../decisions/failure-streak.js';
import { isUrsaError } from '../errors/index.js';
import type { SchedulerDefinition } from '../scheduler/definition.js';
import { parseSchedulerDocument } from '../scheduler/document.js';
import { withEnabled } from '../scheduler/enabled.js';
import { schedulerPath } from '../scheduler/paths.js';
import { URSA_ACTOR } from '../store/audit.js';
import { type StoredDocument, TENANT_PROJECT } from '../store/document-rows.js';
import type { Run } from '../store/runs.js';
import type { Runtime } from './context.js';
import { refreshProject, refreshTenant } from './registrar.js';

/**
 * After a run of `run`'s scheduler ended failed (at `at`, UTC ms): pauses the scheduler when its
 * `pauseOnFailure: N` is reached — the newest N of its runs that ended completed or failed since
 * its document was last written all failed (issue #22). The pause is a pause as `ursa pause`
 * writes it (`enabled: false` through the document path, audited as Ursa's, with a note saying
 * why), compare-and-swapped on the version read, so two workers ending failed runs at once pause
 * it once; then the schedule is refreshed and the scheduler's `runAs` gets an inbox item. A
 * `_tenant` scheduler is paused where its document is: in every project. Writing the document
 * (a resume included) starts the count over.
 *
 * @throws a store error (the run's end is written already: the caller logs it).
 */
export async function pauseAfterFailures(rt: Runtime, run: Run, at: number): Promise<void> {
  const { repos } = rt;
  const path = schedulerPath(run.name);
  const document =
    (await repos.documents.get({ tenant: run.tenant, project: run.project, path })) ??
    (await repos.documents.get({ tenant: run.tenant, project: TENANT_PROJECT, path }));
  if (document === undefined) return;
  const definition = definitionOf(document, run.name);
  const threshold = definition?.pauseOnFailure;
  if (definition === undefined || threshold === undefined || !definition.enabled) return;
  const key = { tenant: run.tenant, project: run.project, name: run.name };
  if (!failureStreakReached(threshold, await repos.runs.finalOutcomes(key, document.updatedAt, threshold))) {
    return;
  }
  const shared = document.project === TENANT_PROJECT;
  const runs = `${threshold} failed run${threshold === 1 ? '' : 's'} in a row`;
  const note = `${runs}${shared ? ` in ${run.project}` : ''} (pauseOnFailure; the last: ${run.correlationId})`;
  const docKey = { tenant: document.tenant, project: document.project, path };
  try {
    await repos.documents.put(docKey, withEnabled(document.body, false), URSA_ACTOR, at, null, {
      expectedVersion: document.version,
      pause: { scheduler: run.name, note: { note, by: URSA_ACTOR.user, at } },
    });
  } catch (error) {
    // Written meanwhile (another worker paused it, someone edited it): that write decides.
    if (isUrsaError(error, 'VERSION_MISMATCH')) return;
    throw error;
  }
  if (document.project === TENANT_PROJECT) await refreshTenant(rt, run.tenant, { asOf: at });
  else await refreshProject(rt, run.tenant, run.project, run.name);
  rt.log.warn(
    { scheduler: run.name, project: run.project, correlationId: run.correlationId, threshold },
    'scheduler paused after failed runs',
  );
  const resume = `ursa resume ${run.name}${shared ? ` --project ${TENANT_PROJECT}` : ''}`;
  await repos.inbox.add({
    tenant: run.tenant,
    user: run.runAs,
    kind: 'scheduler-paused',
    title: `${run.name} paused after ${runs}`,
    body: `The scheduler ${run.name} paused itself: its last ${runs}${shared ? ` in ${run.project}` : ''} (pauseOnFailure: ${threshold}${shared ? `; it is paused in every project of ${run.tenant}` : ''}). The latest run's log: ${run.logPath}. Once the cause is fixed, resume it: ${resume}.`,
    project: run.project,
    scheduler: run.name,
    correlationId: run.correlationId,
    logPath: run.logPath,
    createdAt: at,
  });
}

// The document's definition, or undefined when it does not load (a refresh reports that).
function definitionOf(document: StoredDocument, name: string): SchedulerDefinition | undefined {
  try {
    return parseSchedulerDocument(document.body, { name, path: `${document.project}/${document.path}` });
  } catch {
    return undefined;
  }
}
