import { z } from 'zod';
import { isUrsaError, UrsaError } from '../../errors/index.js';
import {
  ACTOR_INTERFACES,
  type AuditRecord,
  DOCUMENT_ACTIONS,
  type DocumentAction,
} from '../../store/audit.js';
import type { StoredDocument } from '../../store/documents.js';
import type { FeedLine, FeedRun } from '../../store/feed.js';
import { INBOX_KINDS, type InboxItem } from '../../store/inbox.js';
import type { ProcessRecord } from '../../store/processes.js';
import type { Run } from '../../store/runs.js';
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
  allowed: z.string().optional(),
});

const instant = z.string().describe('ISO-8601 UTC instant');

/** A run's outcome (spec §9a), as the feed, the runs table and the run log say it. */
const outcome = z
  .string()
  .describe(
    'pending | completed | failed | cancelled | skipped_overlap | skipped_overlap_queued | skipped_misfire | ' +
      'skipped_deleted | skipped_disabled (the scheduler was deleted or disabled before the run started)',
  );

export const feedLineSchema = z.object({
  id: z.number(),
  at: instant,
  kind: z.enum(['START', 'END', 'SKIPPED']),
  refType: z.literal('SCHEDULER'),
  refId: z.string(),
  traceId: z.string(),
  outcome,
  logPath: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
});

/** Payload fields of feed lines that hold instants as epoch ms (`RunRecorder.appendLine`, the executor). */
const PAYLOAD_INSTANTS = [
  'scheduledFor',
  'coalescedUntil',
  'absorbedFirst',
  'absorbedLast',
  'skippedFirst',
  'skippedLast',
  'runsInstead',
];

/** A feed line as the API shows it: every instant as ISO-8601 UTC, the payload's too. */
export function lineView(line: FeedLine): z.infer<typeof feedLineSchema> {
  const payload: Record<string, unknown> = { ...line.payload };
  for (const key of PAYLOAD_INSTANTS) {
    const value = payload[key];
    if (typeof value === 'number' && Number.isFinite(value)) payload[key] = formatInstant(value);
  }
  return {
    id: line.id,
    at: formatInstant(line.at),
    kind: line.kind,
    refType: line.refType,
    refId: line.refId,
    traceId: line.traceId,
    outcome: line.outcome,
    logPath: line.logPath,
    payload,
  };
}

export const runSchema = z.object({
  correlationId: z.string(),
  scheduler: z.string(),
  trigger: z.string(),
  scheduledFor: instant,
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
  outcome,
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

/**
 * The one answer for a resource the caller cannot see (decisions §6): a missing resource and one of
 * another tenant get the same problem body, word for word — the detail of `callerFor`'s
 * cross-tenant refusal and of the app's not-found handler.
 */
export const NO_SUCH_RESOURCE = 'no such resource';

/** `NOT_FOUND` with the uniform detail {@link NO_SUCH_RESOURCE} (no field, no name). */
export function notFound(): UrsaError {
  return new UrsaError('NOT_FOUND', NO_SUCH_RESOURCE);
}

/**
 * Runs `work` (a service call) and replaces any `NOT_FOUND` it throws by {@link notFound}, so a
 * service's detailed message ("scheduler x does not exist in acme/ops") never makes a missing
 * resource distinguishable from another tenant's.
 */
export async function hidingNotFound<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUrsaError(error, 'NOT_FOUND')) throw notFound();
    throw error;
  }
}

/** User names (decisions §6 name rule). */
export const userName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a user name: letters, digits, ".", "_", "-", at most 128');

/** An opaque id of a run or process (`run_<uuid>`, `proc_<uuid>`). */
const id = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'an id: letters, digits, ".", "_", "-"');

export const runParams = z.strictObject({ tenant: segment, project: segment, correlationId: id });
export const processParams = z.strictObject({ tenant: segment, project: segment, id });
export const documentParams = z.strictObject({
  tenant: segment,
  project: segment,
  '*': z.string().min(1, 'a document path is required').max(1024),
});

/** A run from the runs table (decisions §4) with its run-log document (spec §9a). */
export const runDetailSchema = z.object({
  correlationId: z.string(),
  tenant: z.string(),
  project: z.string(),
  scheduler: z.string(),
  trigger: z.enum(['cron', 'at', 'manual']),
  scheduledFor: instant,
  coalesced: z.boolean(),
  coalescedUntil: instant.nullable(),
  claimedAt: instant,
  state: z.enum(['claimed', 'queued', 'started', 'ended', 'skipped']),
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
  logPath: z.string(),
  log: z.string().nullable().describe('The run-log document (front matter and timeline); null once expired'),
});

/** A run (from the runs table) and its log as the API shows them. */
export function runDetailView(run: Run, log: string | null): z.infer<typeof runDetailSchema> {
  return {
    correlationId: run.correlationId,
    tenant: run.tenant,
    project: run.project,
    scheduler: run.name,
    trigger: run.trigger,
    scheduledFor: formatInstant(run.scheduledFor),
    coalesced: run.coalesced,
    coalescedUntil: iso(run.coalescedUntil),
    claimedAt: formatInstant(run.claimedAt),
    state: run.state,
    outcome: run.outcome,
    reason: run.reason,
    runAs: run.runAs,
    sessionId: run.sessionId,
    processId: run.processId,
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    workerId: run.workerId,
    attempt: run.attempt,
    fencingToken: run.fencingToken,
    logPath: run.logPath,
    log,
  };
}

export const documentSummarySchema = z.object({
  path: z.string(),
  version: z.number(),
  createdBy: z.string(),
  updatedAt: instant,
  expiresAt: instant.nullable(),
});
export const documentSchema = documentSummarySchema.extend({ body: z.string() });

/** A document without its body (listing). */
export function documentSummaryView(doc: StoredDocument): z.infer<typeof documentSummarySchema> {
  return {
    path: doc.path,
    version: doc.version,
    createdBy: doc.createdBy,
    updatedAt: formatInstant(doc.updatedAt),
    expiresAt: iso(doc.expiresAt),
  };
}

/** A document with its body. */
export function documentView(doc: StoredDocument): z.infer<typeof documentSchema> {
  return { ...documentSummaryView(doc), body: doc.body };
}

/**
 * One entry of a document's history on the wire (REST `GET …/history`, the CLI's `doc history`;
 * issue #19): a version written, a delete or a restore, and by whom — the user, the token's id
 * (never its secret), the interface ({@link ACTOR_INTERFACES}) and whether an agent did it.
 * `at` is ISO-8601 UTC; `id` increases in the order actions were recorded.
 */
export const historyEntrySchema = z.object({
  id: z.number().describe('Increasing; the cursor of the next page'),
  version: z.number().describe('The version written, deleted or restored'),
  at: instant,
  action: z.enum(DOCUMENT_ACTIONS),
  path: z.string().describe('Where the document was (a delete: the path it was deleted from)'),
  trashPath: z.string().nullable().describe('A delete or restore: its path in _vance/trash/'),
  user: z.string(),
  tokenId: z.string().nullable().describe('The id of the token used; null for a local command or Ursa'),
  interface: z.enum(ACTOR_INTERFACES),
  agent: z.boolean().describe("true: an agent's tool call"),
});

/**
 * A page of a document's history, newest first: the entries below the request's cursor, and
 * `nextCursor`, the `before` of the next page (null on the last).
 */
export const historySchema = z.object({
  path: z.string(),
  history: z.array(historyEntrySchema),
  nextCursor: z.number().nullable(),
});

export function historyEntryView(record: AuditRecord): z.infer<typeof historyEntrySchema> {
  return {
    id: record.id,
    version: record.version ?? 0,
    at: formatInstant(record.at),
    action: record.action as DocumentAction,
    path: record.subject,
    trashPath: record.trashPath,
    user: record.actor.user,
    tokenId: record.actor.tokenId,
    interface: record.actor.interface,
    agent: record.actor.agent,
  };
}

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
    trigger: z.enum(['cron', 'at', 'manual', 'workflow']),
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

/** A process as the API shows it (instants as ISO-8601). */
export function processView(p: ProcessRecord): z.infer<typeof processSchema> {
  return {
    id: p.id,
    tenant: p.tenant,
    project: p.project,
    sessionId: p.sessionId,
    recipe: p.recipe,
    engine: p.engine,
    status: p.status,
    ownerUser: p.ownerUser,
    triggerOrigin: {
      source: p.triggerOrigin.source,
      scheduledFor: formatInstant(p.triggerOrigin.scheduledFor),
      correlationId: p.triggerOrigin.correlationId,
      trigger: p.triggerOrigin.trigger,
    },
    params: { ...p.params },
    initialMessage: p.initialMessage,
    createdAt: formatInstant(p.createdAt),
    startedAt: iso(p.startedAt),
    endedAt: iso(p.endedAt),
    exitCode: p.exitCode,
    reason: p.reason,
    outputTail: p.outputTail,
    errorTail: p.errorTail,
  };
}

export const inboxItemSchema = z.object({
  id: z.number(),
  user: z.string(),
  kind: z.enum(INBOX_KINDS),
  title: z.string(),
  body: z.string(),
  project: z.string().nullable(),
  scheduler: z.string().nullable(),
  correlationId: z.string().nullable(),
  logPath: z.string().nullable(),
  createdAt: instant,
  readAt: instant.nullable(),
});

/** An inbox item as the API shows it. */
export function inboxItemView(item: InboxItem): z.infer<typeof inboxItemSchema> {
  return {
    id: item.id,
    user: item.user,
    kind: item.kind,
    title: item.title,
    body: item.body,
    project: item.project,
    scheduler: item.scheduler,
    correlationId: item.correlationId,
    logPath: item.logPath,
    createdAt: formatInstant(item.createdAt),
    readAt: iso(item.readAt),
  };
}

/** What a refresh of one project did (spec §8). */
export const refreshSchema = z.object({
  active: z.boolean(),
  registered: z.array(z.string()),
  invalid: z.array(z.object({ path: z.string(), message: z.string() })),
});
