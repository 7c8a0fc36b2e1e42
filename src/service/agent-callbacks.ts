import type {
  AgentCallbackResult,
  AgentCompleteBody,
  AgentOutputBody,
  AgentStatusBody,
} from '../contract/index.js';
import { UrsaError } from '../errors/index.js';
import { endAgentRun } from '../runtime/agent-end.js';
import type { Runtime } from '../runtime/context.js';
import { feedLineOf } from '../runtime/recorder.js';
import { type AgentRunRecord, credentialMatches } from '../store/agent-runs.js';
import { fenceOf } from '../store/fencing.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import type { Run } from '../store/runs.js';

/**
 * The agent callback protocol (issue #25; decisions §5, §6): what an agent service reports of the
 * run Ursa handed it, answered by any server from the store. Every callback is authenticated by
 * the run's credential alone (never a bearer token: {@link authorizeCallback}), speaks for one
 * attempt (its fencing token and attempt, refused when stale) and counts as a heartbeat.
 */

/** One callback: its kind and validated body (`src/contract/agent-runs.ts`). */
export type AgentCallback =
  | { readonly kind: 'heartbeat'; readonly body: Attempt }
  | { readonly kind: 'status'; readonly body: AgentStatusBody }
  | { readonly kind: 'output'; readonly body: AgentOutputBody }
  | { readonly kind: 'complete'; readonly body: AgentCompleteBody };

interface Attempt {
  readonly fencingToken: number;
  readonly attempt: number;
}

/** What a callback may reach besides the store: a worker of this process, to hand on a freed lane. */
export interface CallbackHooks {
  readonly promoteWaiting?: (run: Run) => Promise<unknown>;
  /**
   * Retries a run its service reported failed, when the worker of this process holds it and its
   * scheduler's `retry` leaves an attempt (`Executor.retryHandedOff`); whether it took it on.
   */
  readonly retry?: (run: Run, reason: string) => Promise<boolean>;
}

/** Bytes of output a run keeps (the run log's tail), as the shell engine keeps by default. */
const OUTPUT_KEPT = 8192;

// Compared against when a run is unknown, so that a forged credential for a missing run takes the
// same time as one for a real run.
const NO_HASH = '0'.repeat(64);

/**
 * The run a callback is about, once its credential is checked (decisions §6): the credential's
 * hash matches the one stored for the run's latest attempt (constant-time, over the hashes), and
 * the run is still active at that attempt. A credential of another run, of an earlier attempt, or
 * of a run that ended is refused exactly as a forged one: it grants nothing.
 *
 * @throws UrsaError `UNAUTHENTICATED` (401) when there is no credential, or it does not hold.
 */
export async function authorizeCallback(
  rt: Pick<Runtime, 'repos'>,
  runId: string,
  credential: string | undefined,
): Promise<{ agentRun: AgentRunRecord; run: Run }> {
  if (credential === undefined)
    throw new UrsaError(
      'UNAUTHENTICATED',
      'a run credential is required: Authorization: Bearer <the credential the run was started with>',
    );
  for (let reads = 1; ; reads++) {
    const agentRun = await rt.repos.agentRuns.getWithHash(runId);
    const matches = credentialMatches(credential, agentRun?.credentialHash ?? NO_HASH);
    const run = matches && agentRun !== undefined ? await rt.repos.runs.get(runId) : undefined;
    if (agentRun !== undefined && run?.state === 'started' && run.fencingToken === agentRun.fencingToken) {
      const { credentialHash: _, ...record } = agentRun;
      return { agentRun: record, run };
    }
    // An adoption between the two reads moved the run on (the rows move together): read again.
    if (run?.state !== 'started' || reads === AUTHORIZE_READS)
      throw new UrsaError(
        'UNAUTHENTICATED',
        'the run credential is unknown, belongs to another run, or its run has ended',
      );
  }
}

/** How many times the run and its agent row are read while an adoption moves them on. */
const AUTHORIZE_READS = 3;

/**
 * Applies one callback of the service of run `runId` (issue #25), after {@link authorizeCallback}
 * and a check that it speaks for the run's current attempt. Each one records the service's word
 * as its heartbeat, then:
 *
 * - `heartbeat`: nothing more (no feed line: a service may beat every few seconds for hours).
 * - `status`: the run's process takes the status (`running`, `paused`, `blocked`, `suspended`;
 *   a `blocked` run stays active for the overlap policy), and an `AGENT` feed line says it; a
 *   blocked run's `question` becomes a `question` item of its `runAs` user's inbox.
 * - `output`: the text is appended to the process's output (its last 8 KiB kept), with an
 *   `AGENT` feed line of its length.
 * - `complete`: the run ends through the one end of every run (`endAgentRun`): `done` completed,
 *   `failed` with its reason, `stopped` cancelled (with the reason of the stop Ursa asked for,
 *   if it did); a `summary` is appended to its output first. A `failed` one whose scheduler has
 *   retries left is tried again instead, when the worker of this process holds it (`hooks.retry`).
 *
 * @throws UrsaError `UNAUTHENTICATED` (see {@link authorizeCallback}); `ATTEMPT_STALE` (409)
 *   when its fencing token or attempt is not one of the credential's (nothing changes), or the run
 *   kept moving on while it was applied (its heartbeat may be recorded, nothing else); `CONFLICT`
 *   (409) for a question while the run's question is unanswered (nothing changes).
 */
export async function applyAgentCallback(
  rt: Runtime,
  runId: string,
  credential: string | undefined,
  callback: AgentCallback,
  hooks: CallbackHooks = {},
): Promise<AgentCallbackResult> {
  for (let tries = 1; ; tries++) {
    const { agentRun, run } = await authorizeCallback(rt, runId, credential);
    checkAttempt(agentRun, callback.body);
    try {
      return await applyAt(rt, agentRun, run, callback, hooks);
    } catch (error) {
      // Adopted by another worker while it was applied (decisions §5): read the run again and
      // apply it at the new attempt. An end or a retry meanwhile refuses the credential above.
      if (!(error instanceof MovedOn)) throw error;
      if (tries === MOVED_TRIES) throw stale(agentRun);
    }
  }
}

/** The run moved to another attempt while a callback was applied. */
class MovedOn extends Error {}

/** How many times a callback is applied while its run keeps moving on. */
const MOVED_TRIES = 3;

/** Applies `callback` at the attempt it was authorized for; throws {@link MovedOn} when the run moved on. */
async function applyAt(
  rt: Runtime,
  agentRun: AgentRunRecord,
  run: Run,
  callback: AgentCallback,
  hooks: CallbackHooks,
): Promise<AgentCallbackResult> {
  const runId = run.correlationId;
  if (callback.kind === 'status' && callback.body.question !== undefined) {
    const open = await rt.repos.inboxAnswers.openQuestion(runId, agentRun.credentialFencingToken);
    if (open !== undefined)
      throw new UrsaError(
        'CONFLICT',
        `question: the run's question in inbox item ${open} is not answered yet; a run asks one question at a time; nothing changed`,
        { field: 'question' },
      );
  }
  const now = rt.clock.now();
  const status = callback.kind === 'status' ? callback.body.status : undefined;
  if (!(await rt.repos.agentRuns.heard(runId, agentRun.fencingToken, now, status))) throw new MovedOn();
  const fence = fenceOf(run);
  const { processId } = agentRun;
  // The answer names the current attempt: after an adoption, the one the service speaks for next.
  const current = { attempt: agentRun.attempt, fencingToken: agentRun.fencingToken };
  switch (callback.kind) {
    case 'heartbeat':
      return { runId, state: 'started', status: agentRun.serviceStatus, ...current };
    case 'status': {
      const { status: next, message, question } = callback.body;
      if (!(await rt.repos.processes.transition(processId, ACTIVE_STATUSES, { status: next }, fence)))
        throw new MovedOn();
      const inboxId =
        question === undefined
          ? undefined
          : await ask(rt, run, agentRun.credentialFencingToken, question, now);
      await rt.repos.feed.append(
        feedLineOf(run, 'AGENT', now, 'pending', {
          processId,
          callback: 'status',
          status: next,
          ...(message === undefined ? {} : { message }),
          ...(question === undefined ? {} : { question, inboxId }),
        }),
      );
      return { runId, state: 'started', status: next, ...current };
    }
    case 'output': {
      if (!(await appendOutput(rt, run, processId, callback.body.text))) throw new MovedOn();
      await rt.repos.feed.append(
        feedLineOf(run, 'AGENT', now, 'pending', {
          processId,
          callback: 'output',
          bytes: Buffer.byteLength(callback.body.text, 'utf8'),
        }),
      );
      return { runId, state: 'started', status: agentRun.serviceStatus, ...current };
    }
    case 'complete': {
      const { status: end, reason, summary } = callback.body;
      if (summary !== undefined && !(await appendOutput(rt, run, processId, summary))) throw new MovedOn();
      // A failed attempt with retries left goes on as the run's next attempt (issue #22).
      if (end === 'failed' && (await hooks.retry?.(run, reason ?? 'failed')) === true)
        return { runId, state: 'started', status: end, ...current };
      // A stop Ursa asked for ends with Ursa's reason (`scheduler-overlap`, …), not the service's words.
      const [requested] = end === 'stopped' ? await rt.repos.processes.stopRequested([processId]) : [];
      const ended = await endAgentRun(
        rt,
        run,
        { status: end, reason: requested?.stopReason ?? reason ?? null },
        hooks.promoteWaiting,
      );
      if (!ended) throw new MovedOn();
      return { runId, state: 'ended', status: end, ...current };
    }
  }
}

/** A blocked run's question as an item of its `runAs` user's inbox, linked to the run; its id. */
function ask(
  rt: Runtime,
  run: Run,
  askedFencingToken: number,
  question: string,
  at: number,
): Promise<number> {
  const firstLine = question.split(/\r?\n/, 1)[0] ?? '';
  return rt.repos.inbox.add({
    tenant: run.tenant,
    user: run.runAs,
    kind: 'question',
    title: `${run.name} asks: ${firstLine.length > 200 ? `${firstLine.slice(0, 200)}…` : firstLine}`,
    body: question,
    project: run.project,
    scheduler: run.name,
    correlationId: run.correlationId,
    logPath: run.logPath,
    createdAt: at,
    askedFencingToken,
  });
}

/**
 * Refuses a body whose fencing token or attempt is not one of the run's credential: from the
 * attempt it was given with to the current one. Between them are the attempts of workers that
 * adopted the run (decisions §5): the service's run and credential stayed, and it learns the
 * current attempt from the answer to its next callback. An attempt of another credential (a retry)
 * was refused by the credential already.
 */
function checkAttempt(agentRun: AgentRunRecord, body: Attempt): void {
  const tokens = spanOf(agentRun.credentialFencingToken, agentRun.fencingToken);
  if (body.fencingToken < agentRun.credentialFencingToken || body.fencingToken > agentRun.fencingToken)
    throw new UrsaError(
      'ATTEMPT_STALE',
      `fencingToken: ${body.fencingToken} is not the run's current attempt (fencing token ${tokens}); nothing changed`,
      { field: 'fencingToken', value: body.fencingToken, allowed: tokens },
    );
  const attempts = spanOf(agentRun.credentialAttempt, agentRun.attempt);
  if (body.attempt < agentRun.credentialAttempt || body.attempt > agentRun.attempt)
    throw new UrsaError(
      'ATTEMPT_STALE',
      `attempt: ${body.attempt} is not the run's current attempt (${attempts}); nothing changed`,
      { field: 'attempt', value: body.attempt, allowed: attempts },
    );
}

/** `from` alone, or `from to to` when an adoption moved the run on. */
function spanOf(from: number, to: number): string {
  return from === to ? String(to) : `${from} to ${to}`;
}

/** The run moved on (another attempt, an end) while the callback was applied. */
function stale(agentRun: AgentRunRecord): UrsaError {
  return new UrsaError(
    'ATTEMPT_STALE',
    `the run is no longer at attempt ${agentRun.attempt} (fencing token ${agentRun.fencingToken}); nothing changed`,
    { field: 'fencingToken', value: agentRun.fencingToken },
  );
}

/**
 * Appends `text` to the process's output, keeping its last {@link OUTPUT_KEPT} bytes, at the run's
 * attempt: a compare-and-swap on the tail it read, tried again when another callback appended
 * first, so that concurrent outputs all stay. False when the run is at another attempt now, or the
 * appends kept colliding (nothing appended).
 */
async function appendOutput(rt: Runtime, run: Run, processId: string, text: string): Promise<boolean> {
  for (let tries = 0; tries < APPEND_TRIES; tries++) {
    const process = await rt.repos.processes.get(processId);
    if (process === undefined) return false;
    const was = process.outputTail ?? null;
    const joined = Buffer.from(`${was ?? ''}${text}`, 'utf8');
    let kept = joined.subarray(Math.max(0, joined.length - OUTPUT_KEPT)).toString('utf8');
    // A character cut in half at the start decodes as U+FFFD: drop it.
    if (joined.length > OUTPUT_KEPT) kept = kept.replace(/^\uFFFD+/, '');
    const fence = fenceOf(run);
    if (await rt.repos.processes.transition(processId, ACTIVE_STATUSES, { output_tail: kept }, fence, was))
      return true;
  }
  return false;
}

/** How many times an output is appended while other outputs of the run are appended at once. */
const APPEND_TRIES = 20;
