import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { StartedWorkflow, WorkflowRunner } from '../runtime/workflow-runner.js';
import type { StoredDocument } from '../store/document-rows.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import { parseWorkflowDocument } from '../workflows/parse.js';
import { WORKFLOW_PREFIX, workflowPath } from '../workflows/paths.js';
import { actorOf, type Caller, type VersionGuard } from './caller.js';
import { putNamedDocument, trashNamedDocument } from './named-documents.js';

/** The workflow documents of the caller's project (`_vance/workflows/*.yaml`), by path. */
export async function listWorkflows(rt: Runtime, caller: Caller): Promise<StoredDocument[]> {
  return rt.repos.documents.list(caller.tenant, caller.project, WORKFLOW_PREFIX);
}

/**
 * One workflow document of the caller's project.
 *
 * @throws UrsaError `NAME_INVALID`; `NOT_FOUND` when the project has no such workflow.
 */
export async function getWorkflow(rt: Runtime, caller: Caller, name: string): Promise<StoredDocument> {
  const document = await rt.repos.documents.get({
    tenant: caller.tenant,
    project: caller.project,
    path: workflowPath(name),
  });
  if (document === undefined)
    throw new UrsaError(
      'NOT_FOUND',
      `no workflow ${JSON.stringify(name)} in ${caller.tenant}/${caller.project}`,
      {
        field: 'name',
        value: name,
      },
    );
  return document;
}

/**
 * Creates or replaces a workflow document of the caller's project, validated first (issue #10):
 * a refused document changes nothing. One transaction with `guard`'s compare-and-swap and the
 * audit row (issue #19).
 *
 * @throws UrsaError `NAME_INVALID`, `WORKFLOW_INVALID` (every issue with its field path),
 *   `VERSION_MISMATCH` when `guard` expected another version.
 */
export async function setWorkflow(
  rt: Runtime,
  caller: Caller,
  name: string,
  yaml: string,
  guard: VersionGuard = {},
): Promise<{ path: string; created: boolean; version: number; definition: WorkflowDefinition }> {
  const path = workflowPath(name);
  const definition = parseWorkflowDocument(yaml, {
    name,
    path: `${caller.project}/${path}`,
    limits: rt.settings.templateLimits,
  });
  return { ...(await putNamedDocument(rt, caller, path, yaml, guard)), definition };
}

/**
 * Deletes the workflow `name` of the caller's project: its document goes to the trash
 * (restorable), recorded in the audit trail as the caller's delete (issue #19). A scheduler that
 * names it fails to load from the next refresh on, with the reason.
 *
 * @throws UrsaError `NAME_INVALID`; `NOT_FOUND` when the project has no such workflow;
 *   `VERSION_MISMATCH` when `guard` expected another version.
 */
export function deleteWorkflow(
  rt: Runtime,
  caller: Caller,
  name: string,
  guard: VersionGuard = {},
): Promise<{ trashPath: string }> {
  return trashNamedDocument(rt, caller, 'workflow', name, workflowPath(name), guard);
}

/**
 * Starts a run of workflow `name` in the caller's project as the caller, on `runner` (the
 * server's worker, or the command line's own): it returns at once with the run as started.
 *
 * @throws UrsaError `WORKFLOW_NOT_FOUND`, `WORKFLOW_INVALID`, `ARGUMENT_INVALID` (params).
 */
export function startWorkflow(
  runner: WorkflowRunner,
  caller: Caller,
  name: string,
  params: Readonly<Record<string, unknown>>,
): Promise<StartedWorkflow> {
  return runner.start(caller.tenant, caller.project, name, params, caller.user);
}

/**
 * A workflow run of the caller's project with its steps.
 *
 * @throws UrsaError `NOT_FOUND` when there is no such run in the caller's project.
 */
export async function getWorkflowRun(rt: Runtime, caller: Caller, id: string): Promise<WorkflowRun> {
  const run = await rt.repos.workflowRuns.get(caller.tenant, id);
  if (run === undefined || run.project !== caller.project)
    throw new UrsaError(
      'NOT_FOUND',
      `no workflow run ${JSON.stringify(id)} in ${caller.tenant}/${caller.project}`,
      {
        field: 'id',
        value: id,
      },
    );
  return run;
}

/**
 * Stops a running workflow run, on whichever worker runs it (its running step is stopped within
 * a second; the run ends `cancelled`). False when it had already ended. A stop that stops it is
 * recorded in the audit trail as the caller's (issue #19).
 *
 * @throws UrsaError `NOT_FOUND` when there is no such run in the caller's project.
 */
export async function stopWorkflowRun(rt: Runtime, caller: Caller, id: string): Promise<boolean> {
  await getWorkflowRun(rt, caller, id);
  const now = rt.clock.now();
  return rt.repos.workflowRuns.requestStop(caller.tenant, id, now, {
    tenant: caller.tenant,
    project: caller.project,
    at: now,
    subjectType: 'workflow-run',
    subject: id,
    action: 'stop',
    actor: actorOf(caller),
  });
}
