import { z } from 'zod';
import type { FeedLine, FeedRun } from '../../store/feed.js';
import { formatInstant } from '../../time/instant.js';

/** Path segments: tenant and project names (decisions §6 name rule, `_tenant` allowed). */
const segment = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'a name: letters, digits, ".", "_", "-", at most 128');

export const tenantParams = z.strictObject({ tenant: segment });
export const projectParams = z.strictObject({ tenant: segment, project: segment });
export const schedulerParams = z.strictObject({ tenant: segment, project: segment, name: segment });

/** RFC 9457 problem document with Ursa's stable code (docs/errors.md). */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  code: z.string(),
  detail: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

const instant = z.string().describe('ISO-8601 UTC instant');

export const feedLineSchema = z.object({
  id: z.number(),
  at: instant,
  kind: z.enum(['START', 'END', 'SKIPPED']),
  refType: z.literal('SCHEDULER'),
  refId: z.string(),
  traceId: z.string(),
  outcome: z.string(),
  logPath: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
});

/** A feed line as the API shows it (instants as ISO-8601). */
export function lineView(line: FeedLine): z.infer<typeof feedLineSchema> {
  return { ...line, at: formatInstant(line.at), payload: { ...line.payload } };
}

export const runSchema = z.object({
  correlationId: z.string(),
  scheduler: z.string(),
  trigger: z.string(),
  scheduledFor: instant,
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
  outcome: z.string(),
  durationMs: z.number().nullable(),
  coalesced: z.boolean(),
  coalescedUntil: instant.nullable(),
  reason: z.string().nullable(),
  processId: z.string().nullable(),
  sessionId: z.string().nullable(),
  logPath: z.string().nullable(),
});

const iso = (ms: number | null) => (ms === null ? null : formatInstant(ms));

/** A run (from the feed) as the API shows it. */
export function runView(run: FeedRun): z.infer<typeof runSchema> {
  return {
    correlationId: run.correlationId,
    scheduler: run.scheduler,
    trigger: run.trigger,
    scheduledFor: formatInstant(run.scheduledFor),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    outcome: run.outcome,
    durationMs: run.durationMs,
    coalesced: run.coalesced,
    coalescedUntil: iso(run.coalescedUntil),
    reason: run.reason,
    processId: run.processId,
    sessionId: run.sessionId,
    logPath: run.logPath,
  };
}
