import type {
  DocumentSummary,
  DocumentView,
  EventView,
  HistoryEntryView,
  InboxItemView,
  ProcessView,
  ProjectRefreshView,
  RunDetail,
  RunState,
  RunView,
  SetView,
  WorkflowRunView,
} from '../contract/index.js';
import type { FoldedRuns } from '../runs/run.js';
import type { RefreshResult } from '../runtime/registrar.js';
import type { SchedulerDefinition } from '../scheduler/definition.js';
import type { AuditRecord, DocumentAction } from '../store/audit.js';
import type { StoredDocument } from '../store/document-rows.js';
import type { FeedLine } from '../store/feed.js';
import type { InboxItem } from '../store/inbox.js';
import type { ProcessRecord } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import { formatInstant } from '../time/instant.js';
import type { SetResult } from './schedulers.js';

/**
 * The views of the REST contract (src/contract) made from what the services and the store return:
 * instants (UTC epoch ms) become ISO-8601 UTC text, absent values `null`, read-only arrays fresh
 * copies. The REST routes and the CLI's local client both answer with these, so the two clients
 * see the same values (issue #7 item 7, issue #21 item 4). Pure functions.
 */

const iso = (ms: number | null) => (ms === null ? null : formatInstant(ms));

/** Payload fields of feed lines that hold instants as epoch ms (`RunRecorder.appendLine`, the executor). */
const PAYLOAD_INSTANTS = [
  'scheduledFor',
  'coalescedUntil',
  'absorbedFirst',
  'absorbedLast',
  'skippedFirst',
  'skippedLast',
  'runsInstead',
  'queuedAt',
];

/**
 * What REST's scheduler summary and the agents' `scheduler_list` both say of a definition: its
 * description, its trigger as `cron` or `at` (the other `null`), its zone id and whether it is enabled.
 */
export function definitionFields(d: SchedulerDefinition): {
  readonly description: string;
  readonly cron: string | null;
  readonly at: string | null;
  readonly timezone: string;
  readonly enabled: boolean;
} {
  return {
    description: d.description,
    cron: d.trigger.kind === 'cron' ? d.trigger.expression : null,
    at: d.trigger.kind === 'at' ? d.trigger.at : null,
    timezone: d.zone.id,
    enabled: d.enabled,
  };
}

/** A feed line as the API shows it: every instant as ISO-8601 UTC, the payload's too. */
export function lineView(line: FeedLine): EventView {
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

/**
 * A run's state as every surface shows it (issue #23), from its state in the store and its
 * process's status: claimed and queued runs are `queued`; a started run is `running`, or the
 * status its agent reported (`paused`, `blocked`, `suspended`).
 */
export function runStateOf(state: Run['state'], processStatus: string | null): RunState {
  switch (state) {
    case 'claimed':
    case 'queued':
      return 'queued';
    case 'started':
      return processStatus === 'paused' || processStatus === 'blocked' || processStatus === 'suspended'
        ? processStatus
        : 'running';
    default:
      return state;
  }
}

/** How a run relates to the others of its lane, as the views show it (`runLinks`). */
function linksOf(run: Run, folded: FoldedRuns | undefined) {
  return {
    queuedAt: iso(run.queuedAt),
    waitingBehind: run.waitingBehind,
    foldedInto: run.foldedInto,
    folded:
      folded === undefined ? null : { count: folded.count, first: folded.first.map((f) => f.correlationId) },
  };
}

/** A run of a scheduler's run list (issue #23): its state, outcome and links, from the runs table. */
export function runView(run: Run, processStatus: string | null, folded: FoldedRuns | undefined): RunView {
  return {
    correlationId: run.correlationId,
    scheduler: run.name,
    trigger: run.trigger,
    scheduledFor: formatInstant(run.scheduledFor),
    state: runStateOf(run.state, processStatus),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    outcome: run.outcome,
    durationMs: run.startedAt !== null && run.endedAt !== null ? run.endedAt - run.startedAt : null,
    coalesced: run.coalesced,
    coalescedUntil: iso(run.coalescedUntil),
    reason: run.reason,
    attempt: run.attempt,
    processId: run.processId,
    sessionId: run.sessionId,
    logPath: run.logPath,
    ...linksOf(run, folded),
  };
}

/** A run (from the runs table) and its log (null once expired) as the API shows them. */
export function runDetailView(
  run: Run,
  log: string | null,
  process: Pick<ProcessRecord, 'status' | 'outputTail' | 'errorTail'> | undefined,
  folded: FoldedRuns | undefined,
): RunDetail {
  const state = runStateOf(run.state, process?.status ?? null);
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
    state,
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
    ...linksOf(run, folded),
    output:
      run.state === 'started' && process !== undefined
        ? { output: process.outputTail, errorOutput: process.errorTail }
        : null,
    logPath: run.logPath,
    log,
  };
}

/** A document without its body (listing). */
export function documentSummaryView(doc: StoredDocument): DocumentSummary {
  return {
    path: doc.path,
    version: doc.version,
    createdBy: doc.createdBy,
    updatedAt: formatInstant(doc.updatedAt),
    expiresAt: iso(doc.expiresAt),
  };
}

/** A document with its body. */
export function documentView(doc: StoredDocument): DocumentView {
  return { ...documentSummaryView(doc), body: doc.body };
}

/** One audit record of a document as an entry of its history (issue #19); a record without a version shows 0. */
export function historyEntryView(record: AuditRecord): HistoryEntryView {
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

/** A process as the API shows it (instants as ISO-8601). */
export function processView(p: ProcessRecord): ProcessView {
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

/** An inbox item as the API shows it; a question with its answer, who gave it and when. */
export function inboxItemView(item: InboxItem): InboxItemView {
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
    ...(item.kind === 'question'
      ? {
          answer: item.answer ?? null,
          answeredBy: item.answeredBy ?? null,
          answeredAt: iso(item.answeredAt ?? null),
        }
      : {}),
  };
}

/** What a refresh of one project did, as `POST …/scheduler/refresh` answers it (registered names in the registrar's order). */
export function refreshView(result: RefreshResult): ProjectRefreshView {
  return {
    active: result.active,
    registered: [...result.registered],
    invalid: result.failures.map((f) => ({ path: f.path, message: f.message })),
  };
}

/** What a scheduler write did, as `PUT …/scheduler/:name` answers it (`filledTimezone` null when the document named a zone). */
export function setView(result: SetResult): SetView {
  return {
    path: result.path,
    created: result.created,
    version: result.version,
    warnings: [...result.warnings],
    filledTimezone: result.filledTimezone ?? null,
  };
}

/** A workflow run with its steps (issue #10), instants as ISO-8601. */
export function workflowRunView(run: WorkflowRun): WorkflowRunView {
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
