import { z } from 'zod';
import { instant, outcome, runLinks, runState } from './common.js';

/** Runs by correlation id and processes (issue #7; decisions §4, §7): what the API answers and takes. */

/** A run from the runs table (decisions §4) with its run-log document (spec §9a). */
export const runDetailSchema = z.object({
  correlationId: z.string(),
  tenant: z.string(),
  project: z.string(),
  scheduler: z.string(),
  trigger: z.enum(['cron', 'at', 'manual', 'backfill']),
  scheduledFor: instant,
  coalesced: z.boolean(),
  coalescedUntil: instant.nullable(),
  claimedAt: instant,
  state: runState,
  outcome,
  reason: z.string().nullable(),
  runAs: z.string(),
  sessionId: z.string().nullable(),
  processId: z.string().nullable(),
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
  workerId: z.string().nullable(),
  attempt: z
    .number()
    .int()
    .describe('How many times the run was started (its attempts): 0 until it starts, then 1, 2, …'),
  fencingToken: z
    .number()
    .int()
    .nullable()
    .describe(
      'The fencing token of its latest attempt, as its engine received it (URSA_FENCING_TOKEN, Ursa-Fencing-Token); null until it starts',
    ),
  ...runLinks,
  output: z
    .object({ output: z.string().nullable(), errorOutput: z.string().nullable() })
    .nullable()
    .describe(
      "The tails of its process's output so far, while it runs (null otherwise: the run log has them)",
    ),
  logPath: z.string(),
  log: z.string().nullable().describe('The run-log document (front matter and timeline); null once expired'),
});

/** A process (an agent session an engine runs) with its trigger origin, exit code and output tails. */
export const processSchema = z.object({
  id: z.string(),
  tenant: z.string(),
  project: z.string(),
  sessionId: z.string(),
  recipe: z.string(),
  engine: z.string(),
  status: z.enum(['ready', 'running', 'paused', 'blocked', 'suspended', 'done', 'stopped', 'failed']),
  ownerUser: z.string(),
  triggerOrigin: z.object({
    source: z.string(),
    scheduledFor: instant,
    correlationId: z.string(),
    trigger: z.enum(['cron', 'at', 'manual', 'backfill', 'workflow']),
  }),
  params: z.record(z.string(), z.unknown()),
  initialMessage: z.string().nullable(),
  createdAt: instant,
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
  exitCode: z.number().nullable(),
  reason: z.string().nullable(),
  outputTail: z.string().nullable(),
  errorTail: z.string().nullable(),
});

/** `POST …/processes/:id/stop`; optional: a POST without a body reaches the handler as null (or undefined). */
export const stopBody = z
  .strictObject({ reason: z.string().min(1).max(200).describe('Why; the run log and END line say it') })
  .nullish();

/** What a process stop did. */
export const stopResultSchema = z.object({
  stopping: z.boolean().describe('false when the process had already ended or was being stopped'),
});
