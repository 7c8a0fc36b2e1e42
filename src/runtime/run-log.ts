import type { FoldedRuns } from '../runs/run.js';
import { type LockMode, recordedLockMode } from '../scheduler/definition.js';
import type { ProcessRecord } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import { formatInstant } from '../time/instant.js';
import { type FlatScalar, stringifyFlatMap } from '../yaml/flat-map.js';
import { codeBlock, inlineLiteral } from './markdown-literal.js';

/** Where run logs live (spec §9a). */
export const RUN_LOG_PREFIX = '_vance/logs/scheduler/';

/** `20260609T081500Z`: an instant in ISO-8601 basic format, which sorts as text. */
function basicStamp(epochMs: number): string {
  return formatInstant(epochMs)
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** The run-log path of spec §9a: `_vance/logs/scheduler/<name>/<isoStamp>-<correlationId>.md`. */
export function runLogPath(name: string, scheduledFor: number, correlationId: string): string {
  return `${RUN_LOG_PREFIX}${name}/${basicStamp(scheduledFor)}-${correlationId}.md`;
}

/**
 * The lock mode a run log says its run was claimed under: its front matter's `lockMode`, which
 * {@link renderRunLog} writes for `protected` and `hidden` runs (see `recordedLockMode` for a
 * missing or odd value). Only the front matter is read: process output, which comes after it,
 * cannot make a log look recorded as anything.
 */
export function runLogLockMode(body: string): LockMode {
  if (!body.startsWith('---\n')) return 'full';
  const end = body.indexOf('\n---\n', 3);
  const front = end < 0 ? body : body.slice(0, end);
  return recordedLockMode(/^lockMode: (.*)$/m.exec(front)?.[1]);
}

/** What a coalesced run absorbed (decisions §4): how many occurrences, and the first and last. */
export interface Absorbed {
  /** Occurrences after `scheduledFor` up to `coalescedUntil`; counted up to a cap. */
  readonly count: number;
  /** True when there were more than `count` (counting stopped at the cap). */
  readonly capped: boolean;
  readonly first: number;
  readonly last: number;
}

/**
 * A line of a run log's timeline that the run's state does not say: an instant (UTC ms) and
 * text Ursa writes itself (never text from a user or a process: it goes in as it is).
 */
export interface RunLogNote {
  readonly at: number;
  readonly text: string;
}

/** An attempt of a run that failed and was retried (issue #22), as its run log shows it. Instants are UTC ms. */
export interface EarlierAttempt {
  readonly attempt: number;
  readonly processId: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly reason: string | null;
  /** When the next attempt was due. */
  readonly retryAt: number;
}

/** What a run log shows of the run's process. */
export type RunLogProcess = Pick<ProcessRecord, 'exitCode' | 'outputTail' | 'errorTail'>;

/**
 * Renders the run-log document of spec §9a: YAML front matter and a Markdown body with the
 * timeline. Pure: it is re-rendered from the run (and its process) on every transition, so the
 * document always says the latest state; `pending` until the run ends.
 *
 * Text Ursa did not write itself (process output, reasons, error messages, user names) goes in as
 * literal text that cannot forge the document's structure (see `markdown-literal.ts`), and the
 * front matter is written by the `yaml` package, whose quoting keeps every value inside it.
 */
export function renderRunLog(
  run: Run,
  process: RunLogProcess | undefined,
  absorbed?: Absorbed,
  /** The workflow run a workflow target started (spec §4.2), as it stands. */
  workflowRun?: WorkflowRun,
  /** A line for the timeline, after the run's own (e.g. why a queued run waits for another worker). */
  note?: RunLogNote,
  /** The run's attempts before its latest, each with a section of the timeline (issue #22 retries). */
  earlier: readonly EarlierAttempt[] = [],
  /** For a run that waited in its lane: the later requests folded into it (issue #23). */
  folded?: FoldedRuns,
  /** An agent run's reports (issue #25), oldest first: their texts are literal already. */
  agentEvents: readonly RunLogNote[] = [],
): string {
  const durationMs = run.startedAt !== null && run.endedAt !== null ? run.endedAt - run.startedAt : null;
  const front: Record<string, FlatScalar> = {
    kind: 'scheduler-log',
    scheduler: run.name,
    correlationId: run.correlationId,
    trigger: run.trigger,
    scheduledFor: formatInstant(run.scheduledFor),
    runAs: run.runAs,
    sessionId: run.sessionId,
    processId: run.processId,
    firedAt: formatInstant(run.startedAt ?? run.claimedAt),
    completedAt: run.endedAt === null ? null : formatInstant(run.endedAt),
    durationMs,
    latenessMs: run.startedAt === null ? null : run.startedAt - run.scheduledFor,
    outcome: run.outcome,
  };
  // The attempt, so that a service that refused a stale token can be matched with its run (decisions §5).
  if (run.fencingToken !== null) {
    front.attempt = run.attempt;
    front.fencingToken = run.fencingToken;
  }
  // What agents are shown is decided from this, however the scheduler changes later (spec §10b).
  if (run.lockMode !== 'full') front.lockMode = run.lockMode;
  if (run.coalesced) {
    front.coalesced = true;
    front.coalescedUntil = run.coalescedUntil === null ? null : formatInstant(run.coalescedUntil);
    if (absorbed !== undefined)
      front.absorbed = absorbed.capped ? `more than ${absorbed.count}` : absorbed.count;
  }
  if (run.waitingBehind !== null) front.waitingBehind = run.waitingBehind;
  if (run.foldedInto !== null) front.foldedInto = run.foldedInto;
  if (folded !== undefined && folded.count > 0) front.folded = folded.count;
  if (workflowRun !== undefined) front.workflowRunId = workflowRun.id;
  if (run.reason !== null) front.reason = run.reason;
  if (process?.exitCode !== null && process?.exitCode !== undefined) front.exitCode = process.exitCode;

  const lines = [
    '---',
    stringifyFlatMap(front),
    '---',
    '',
    `# Scheduler '${inlineLiteral(run.name)}' — ${run.correlationId}`,
    '',
    `- **Scheduled for:** ${formatInstant(run.scheduledFor)} (${run.trigger})`,
    `- **Outcome:** ${run.outcome}${durationMs === null ? '' : ` (${durationMs} ms)`}${run.reason ? ` — ${inlineLiteral(run.reason)}` : ''}`,
    `- **RunAs:** ${inlineLiteral(run.runAs)}`,
  ];
  if (run.processId !== null) lines.push(`- **Process:** ${run.processId}`);
  if (run.sessionId !== null) lines.push(`- **Session:** ${run.sessionId}`);
  if (run.coalesced && run.coalescedUntil !== null) {
    const what =
      absorbed === undefined
        ? `later occurrences up to ${formatInstant(run.coalescedUntil)}`
        : `${absorbed.capped ? 'more than ' : ''}${absorbed.count} later occurrence(s), from ${formatInstant(absorbed.first)} to ${formatInstant(absorbed.last)},`;
    lines.push(
      run.state === 'skipped'
        ? `- **Coalesced:** this skipped run stands for the occurrence due at ${formatInstant(run.scheduledFor)}; ` +
            `${what} were already due and were skipped with it.`
        : `- **Coalesced:** this run served the occurrence due at ${formatInstant(run.scheduledFor)}; ` +
            `${what} were already due and were absorbed into it: missed occurrences are coalesced into one run, never replayed one by one.`,
    );
  }
  lines.push('', '## Timeline', '');
  const name = inlineLiteral(run.name);
  lines.push(`- ${formatInstant(run.claimedAt)}  TRIGGERED  source=ursascheduler:${name}`);
  // The wait stays in the story after the run started and ended (issue #23).
  if (run.queuedAt !== null) {
    const behind =
      run.waitingBehind === null
        ? `waiting for its turn in the backfill of ${name}`
        : `waiting behind ${run.waitingBehind}, the active run of ${name} (overlap)`;
    lines.push(`- ${formatInstant(run.queuedAt)}  QUEUED     ${behind}`);
  }
  for (const f of folded?.first ?? []) {
    lines.push(
      `- ${formatInstant(f.endedAt ?? f.scheduledFor)}  FOLDED     ${f.correlationId} (${f.trigger}, for ${formatInstant(f.scheduledFor)}) was folded into this run`,
    );
  }
  if (folded !== undefined && folded.count > folded.first.length) {
    lines.push(`  - and ${folded.count - folded.first.length} more, ${folded.count} in all`);
  }
  if (run.state === 'skipped') {
    const into = run.foldedInto === null ? '' : ` folded into ${run.foldedInto}, which was already waiting`;
    lines.push(
      `- ${formatInstant(run.endedAt ?? run.claimedAt)}  SKIPPED    outcome=${run.outcome} reason=${run.reason ? inlineLiteral(run.reason) : ''}${into}`,
    );
  }
  for (const a of earlier) {
    const why = a.reason ? `reason=${inlineLiteral(a.reason)}; ` : '';
    lines.push('', `### Attempt ${a.attempt}`, '');
    lines.push(`- ${formatInstant(a.startedAt)}  STARTED    process=${a.processId}`);
    lines.push(
      `- ${formatInstant(a.endedAt)}  FAILED     ${why}the next attempt is due at ${formatInstant(a.retryAt)}`,
    );
  }
  if (earlier.length > 0) lines.push('', `### Attempt ${run.attempt}`, '');
  if (run.startedAt !== null) {
    const what =
      workflowRun === undefined
        ? `process=${run.processId} session=${run.sessionId}`
        : `workflowRun=${workflowRun.id} session=${workflowRun.sessionId}`;
    lines.push(`- ${formatInstant(run.startedAt)}  STARTED    ${what}`);
  }
  for (const e of agentEvents) lines.push(`- ${formatInstant(e.at)}  AGENT      ${e.text}`);
  if (run.endedAt !== null) {
    lines.push(`- ${formatInstant(run.endedAt)}  TERMINATED outcome=${run.outcome}`);
  }
  if (note !== undefined) lines.push(`- ${formatInstant(note.at)}  NOTE       ${note.text}`);
  if (workflowRun !== undefined) {
    lines.push(
      '',
      `## Workflow run ${workflowRun.id} (${inlineLiteral(workflowRun.workflow)}): ${workflowRun.status}`,
      '',
    );
    for (const step of workflowRun.steps) {
      const reason = step.reason ? ` — ${inlineLiteral(step.reason)}` : '';
      lines.push(`- ${inlineLiteral(step.name)} (${inlineLiteral(step.recipe)}): ${step.status}${reason}`);
    }
  }
  if (process?.outputTail) lines.push('', '## Output', '', ...codeBlock(process.outputTail.trimEnd()));
  if (process?.errorTail) lines.push('', '## Error output', '', ...codeBlock(process.errorTail.trimEnd()));
  return `${lines.join('\n')}\n`;
}
