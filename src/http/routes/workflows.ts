import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { WorkflowRunner } from '../../runtime/workflow-runner.js';
import type { WorkflowRun } from '../../service/records.js';
import {
  getWorkflow,
  getWorkflowRun,
  listWorkflows,
  setWorkflow,
  startWorkflow,
  stopWorkflowRun,
} from '../../service/workflows.js';
import { formatInstant } from '../../time/instant.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';
import { ifMatch, withEtag } from '../conditional.js';
import {
  documentSchema,
  documentSummarySchema,
  documentSummaryView,
  documentView,
  problemSchema,
  projectParams,
  schedulerParams,
} from './schemas.js';

const BASE = '/brain/:tenant/project/:project';

const runParams = z.strictObject({
  tenant: projectParams.shape.tenant,
  project: projectParams.shape.project,
  id: z.string().regex(/^[0-9a-f]{8}$/, 'expected 8 hex digits'),
});

const iso = (ms: number | null) => (ms === null ? null : formatInstant(ms));

const stepSchema = z.object({
  name: z.string(),
  recipe: z.string(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'cancelled', 'skipped']),
  processId: z.string().nullable(),
  output: z.string().nullable(),
  reason: z.string().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
});

const workflowRunSchema = z.object({
  workflowRunId: z.string(),
  workflow: z.string(),
  status: z.enum(['running', 'completed', 'failed', 'cancelled']),
  params: z.record(z.string(), z.unknown()),
  runAs: z.string(),
  sessionId: z.string(),
  correlationId: z.string().nullable().describe('The scheduler run that started it, if a scheduler did'),
  reason: z.string().nullable(),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
  document: z.string().describe('The workflow document as it was at start'),
  steps: z.array(stepSchema),
});

function workflowRunView(run: WorkflowRun): z.infer<typeof workflowRunSchema> {
  return {
    workflowRunId: run.id,
    workflow: run.workflow,
    status: run.status,
    params: { ...run.params },
    runAs: run.runAs,
    sessionId: run.sessionId,
    correlationId: run.correlationId,
    reason: run.reason,
    createdAt: formatInstant(run.createdAt),
    endedAt: iso(run.endedAt),
    document: run.document,
    steps: run.steps.map((s) => ({
      name: s.name,
      recipe: s.recipe,
      status: s.status,
      processId: s.processId,
      output: s.output,
      reason: s.reason,
      startedAt: iso(s.startedAt),
      endedAt: iso(s.endedAt),
    })),
  };
}

/**
 * Workflows (issue #10): their documents (list, get, set) and their runs (start, get with steps,
 * stop). A start runs on the server's worker, or on a runner of the API when no loop runs.
 */
export async function workflowRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const runner = options.workflows ?? new WorkflowRunner(rt);
  const errors = { 400: problemSchema, 401: problemSchema, 403: problemSchema, 404: problemSchema };

  r.get(
    `${BASE}/workflows`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'The workflow documents of a project (_vance/workflows/*.yaml), without bodies',
        params: projectParams,
        response: { 200: z.object({ workflows: z.array(documentSummarySchema) }), ...errors },
      },
    },
    async (request) => {
      const { tenant, project } = request.params;
      const caller = callerFor(request, tenant, project, 'read');
      return { workflows: (await listWorkflows(rt, caller)).map(documentSummaryView) };
    },
  );

  r.get(
    `${BASE}/workflows/:name`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'One workflow document; its version is the ETag (for If-Match)',
        params: schedulerParams,
        response: { 200: documentSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const document = await getWorkflow(rt, callerFor(request, tenant, project, 'read'), name);
      withEtag(reply, document.version);
      return documentView(document);
    },
  );

  r.put(
    `${BASE}/workflows/:name`,
    {
      schema: {
        tags: ['workflows'],
        summary:
          'Create or replace a workflow: YAML text (application/yaml) or {"yaml": "..."}; with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        // The 64 KiB limit is in bytes of UTF-8, checked with the document (DOCUMENT_INVALID), the
        // same for YAML text and {yaml}.
        body: z.union([z.string(), z.strictObject({ yaml: z.string() })]),
        response: {
          200: z.object({ path: z.string(), created: z.boolean(), version: z.number() }),
          201: z.object({ path: z.string(), created: z.boolean(), version: z.number() }),
          ...errors,
          412: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const yaml = typeof request.body === 'string' ? request.body : request.body.yaml;
      const { path, created, version } = await setWorkflow(rt, caller, name, yaml, ifMatch(request));
      return withEtag(reply, version)
        .status(created ? 201 : 200)
        .send({ path, created, version });
    },
  );

  r.post(
    `${BASE}/workflows/:name/runs`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'Start a run of a workflow as the caller; it runs in the background',
        params: schedulerParams,
        body: z
          .strictObject({ params: z.record(z.string(), z.unknown()).default({}) })
          .nullish()
          .describe('Parameters over the workflow defaults'),
        response: { 201: workflowRunSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const { run } = await startWorkflow(runner, caller, name, request.body?.params ?? {});
      return reply.status(201).send(workflowRunView(run));
    },
  );

  r.get(
    `${BASE}/workflow-runs/:id`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'One workflow run with its steps',
        params: runParams,
        response: { 200: workflowRunSchema, ...errors },
      },
    },
    async (request) => {
      const { tenant, project, id } = request.params;
      return workflowRunView(await getWorkflowRun(rt, callerFor(request, tenant, project, 'read'), id));
    },
  );

  r.post(
    `${BASE}/workflow-runs/:id/stop`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'Stop a workflow run: its running step is stopped, the rest skipped (status cancelled)',
        params: runParams,
        response: {
          200: z.object({ stopping: z.boolean().describe('false when the run had already ended') }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { tenant, project, id } = request.params;
      return { stopping: await stopWorkflowRun(rt, callerFor(request, tenant, project, 'write'), id) };
    },
  );
}
