import { z } from 'zod';
import { projectParams } from './common.js';
import { documentSummarySchema } from './documents.js';

/** Workflows (issue #10): their documents and their runs on the wire. */

/** `…/workflow-runs/:id`: a workflow run's id is 8 hex digits. */
export const workflowRunParams = z.strictObject({
  tenant: projectParams.shape.tenant,
  project: projectParams.shape.project,
  id: z.string().regex(/^[0-9a-f]{8}$/, 'expected 8 hex digits'),
});

/** `GET …/workflows`: the workflow documents, without bodies. */
export const workflowListSchema = z.object({ workflows: z.array(documentSummarySchema) });

/** What a workflow write did (`PUT …/workflows/:name`). */
export const workflowSetResultSchema = z.object({
  path: z.string(),
  created: z.boolean(),
  version: z.number(),
});

/** `POST …/workflows/:name/runs`: parameters over the workflow defaults; the body may be left out. */
export const workflowStartBody = z
  .strictObject({ params: z.record(z.string(), z.unknown()).default({}) })
  .nullish()
  .describe('Parameters over the workflow defaults');

/** One step of a workflow run; instants ISO-8601 UTC. */
export const stepSchema = z.object({
  name: z.string(),
  recipe: z.string(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'cancelled', 'skipped']),
  processId: z.string().nullable(),
  output: z.string().nullable(),
  reason: z.string().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
});

/** A workflow run with its steps. */
export const workflowRunSchema = z.object({
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

/** What a workflow-run stop did. */
export const workflowStopResultSchema = z.object({
  stopping: z.boolean().describe('false when the run had already ended'),
});
