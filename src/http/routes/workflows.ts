import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  deleteResultSchema,
  documentSchema,
  problemSchema,
  projectParams,
  schedulerParams,
  workflowListSchema,
  workflowRunParams,
  workflowRunSchema,
  workflowSetResultSchema,
  workflowStartBody,
  workflowStopResultSchema,
  yamlBody,
} from '../../contract/index.js';
import { WorkflowRunner } from '../../runtime/workflow-runner.js';
import { documentSummaryView, documentView, workflowRunView } from '../../service/views.js';
import {
  deleteWorkflow,
  getWorkflow,
  getWorkflowRun,
  listWorkflows,
  setWorkflow,
  startWorkflow,
  stopWorkflowRun,
} from '../../service/workflows.js';
import type { AppOptions } from '../app.js';
import { callerFor } from '../auth.js';
import { ifMatch, withEtag } from '../conditional.js';
import { hidingNotFound } from '../not-found.js';
import { ERROR_RESPONSES } from './error-responses.js';

const BASE = '/brain/:tenant/project/:project';

/**
 * Workflows (issue #10): their documents (list, get, set, delete) and their runs (start, get with steps,
 * stop). A start runs on the server's worker, or on a runner of the API when no loop runs.
 */
export async function workflowRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rt } = options;
  const runner = options.workflows ?? new WorkflowRunner(rt);
  const errors = ERROR_RESPONSES;

  r.get(
    `${BASE}/workflows`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'The workflow documents of a project (_vance/workflows/*.yaml), without bodies',
        params: projectParams,
        response: { 200: workflowListSchema, ...errors },
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
        body: yamlBody,
        response: {
          200: workflowSetResultSchema,
          201: workflowSetResultSchema,
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

  r.delete(
    `${BASE}/workflows/:name`,
    {
      schema: {
        tags: ['workflows'],
        summary:
          'Delete a workflow (its document goes to the trash); with If-Match: "<version>" only while it is at that version (else 412)',
        params: schedulerParams,
        response: { 200: deleteResultSchema, ...errors, 412: problemSchema },
      },
    },
    async (request) => {
      const { tenant, project, name } = request.params;
      const caller = callerFor(request, tenant, project, 'write');
      const guard = ifMatch(request);
      return hidingNotFound(() => deleteWorkflow(rt, caller, name, guard));
    },
  );

  r.post(
    `${BASE}/workflows/:name/runs`,
    {
      schema: {
        tags: ['workflows'],
        summary: 'Start a run of a workflow as the caller; it runs in the background',
        params: schedulerParams,
        body: workflowStartBody,
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
        params: workflowRunParams,
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
        params: workflowRunParams,
        response: {
          200: workflowStopResultSchema,
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
