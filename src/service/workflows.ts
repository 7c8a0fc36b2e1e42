import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import type { StartedWorkflow, WorkflowRunner } from '../runtime/workflow-runner.js';
import type { StoredDocument } from '../store/document-rows.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import { parseWorkflowDocument } from '../workflows/parse.js';
import { WORKFLOW_PREFIX, workflowPath } from '../workflows/paths.js';
import { actorOf, type Caller, type VersionGuard } from './caller.js';

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
  const now = rt.clock.now();
  const written = await rt.repos.documents.put(
    { tenant: caller.tenant, project: caller.project, path },
    yaml,
    actorOf(caller),
    now,
    null,
    guard,
  );
  // After the write: a refused one (VERSION_MISMATCH) changes nothing.
  await rt.repos.users.ensure(caller.tenant, caller.user, now);
  return { path, ...written, definition };
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
