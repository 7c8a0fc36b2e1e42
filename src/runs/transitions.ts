import { type EndOutcome, RunOutcome, type Skip } from './outcomes.js';
import type {
  ClaimedRun,
  EndedFrom,
  FencedRun,
  PendingRun,
  QueuedRun,
  Run,
  SkippedRun,
  StartedRun,
} from './run.js';

/**
 * What a new run is made of (see {@link claimRun}): its occurrence, who runs it, its log's path
 * (`runLogPath`, spec §9a), and `coalescedUntil`, the newest later occurrence it absorbs
 * (decisions §4) or null. The caller chooses its `correlationId` (`run_<uuid>`): this module
 * draws no random numbers. Instants are UTC epoch ms.
 */
export type NewRun = Pick<
  ClaimedRun,
  | 'correlationId'
  | 'tenant'
  | 'project'
  | 'name'
  | 'scheduledFor'
  | 'trigger'
  | 'coalescedUntil'
  | 'claimedAt'
  | 'runAs'
  | 'logPath'
  | 'workerId'
  | 'lockMode'
>;

/**
 * A run as its claim records it, pure: `claimed`, outcome `pending`, no attempt yet; `coalesced`
 * when it absorbs later occurrences (decisions §4). The one constructor of a run.
 */
export function claimRun(fields: NewRun): ClaimedRun {
  // Every field named in one literal, none spread in: a run built by spreading its 12 given
  // fields and adding 10 more is a slow, dictionary-mode object in V8, which cost the every-second
  // batches of 1,000 runs their precision (`npm run bench -- precision`).
  return {
    correlationId: fields.correlationId,
    tenant: fields.tenant,
    project: fields.project,
    name: fields.name,
    scheduledFor: fields.scheduledFor,
    trigger: fields.trigger,
    coalesced: fields.coalescedUntil !== null,
    coalescedUntil: fields.coalescedUntil,
    claimedAt: fields.claimedAt,
    state: 'claimed',
    outcome: RunOutcome.PENDING,
    reason: null,
    runAs: fields.runAs,
    sessionId: null,
    processId: null,
    logPath: fields.logPath,
    startedAt: null,
    endedAt: null,
    workerId: fields.workerId,
    lockMode: fields.lockMode,
    attempt: 0,
    fencingToken: null,
    queuedAt: null,
    waitingBehind: null,
    foldedInto: null,
  };
}

/**
 * A claim that is skipped at once for a misfire (decisions §4): `skipped_misfire` with `reason`
 * (why: the threshold, the catch-up window), no end instant.
 */
export function skipMisfire(run: ClaimedRun, reason: string): SkippedRun {
  return { ...run, state: 'skipped', outcome: RunOutcome.SKIPPED_MISFIRE, reason };
}

/**
 * Where and when a run starts: its scheduler's system session and its process (both null for a
 * workflow target). `S` and `P` carry what the caller knows of them into the started run's type.
 */
export interface Start<P extends string | null = string | null, S extends string | null = string | null> {
  readonly sessionId: S;
  readonly processId: P;
  /** The start instant, UTC ms. */
  readonly at: number;
}

/** The attempt a start began (decisions §5): the run's attempt count after it, and its fencing token. */
export interface AttemptOf {
  readonly attempt: number;
  readonly fencingToken: number;
}

/** A pending run as it starts (spec §5 `start`), pure; with the attempt its start transaction began. */
export function startRun<P extends string | null, S extends string | null>(
  run: PendingRun,
  start: Start<P, S>,
): StartedRun & { processId: P; sessionId: S };
export function startRun<P extends string | null, S extends string | null>(
  run: PendingRun,
  start: Start<P, S>,
  attempt: AttemptOf,
): FencedRun<P> & { sessionId: S };
export function startRun<P extends string | null, S extends string | null>(
  run: PendingRun,
  start: Start<P, S>,
  attempt?: AttemptOf,
): StartedRun & { processId: P; sessionId: S } {
  return {
    ...run,
    state: 'started',
    sessionId: start.sessionId,
    processId: start.processId,
    startedAt: start.at,
    ...attempt,
  };
}

/**
 * A run as it ends at `at` with `outcome` and `reason`, pure. Usually a started run (its engine
 * or workflow run returned, or its worker was lost); a pending one ends `failed` when it cannot be
 * started at all (spawn retries spent). `workerId`, when given, is the worker that ends it.
 */
export function endRun<R extends Run>(
  run: R,
  outcome: EndOutcome,
  reason: string | null,
  at: number,
  workerId: string | null = run.workerId,
): EndedFrom<R> {
  // TypeScript types a spread of a generic as an intersection, not as the fields replaced.
  return { ...run, state: 'ended', outcome, reason, endedAt: at, workerId } as EndedFrom<R>;
}

/** A run ended `failed` at `at` for `reason` (see {@link endRun}). */
export function failRun<R extends Run>(
  run: R,
  reason: string | null,
  at: number,
  workerId?: string | null,
): EndedFrom<R> {
  return endRun(run, RunOutcome.FAILED, reason, at, workerId);
}

/**
 * A one-shot released at `at` before its process entered its engine (spec §10a): ended
 * `cancelled`, and tried again, since it is not used up.
 */
export function releaseRun<R extends Run>(run: R, reason: string, at: number): EndedFrom<R> {
  return endRun(run, RunOutcome.CANCELLED, reason, at);
}

/** A pending run its admission did not start (see `skipOf`), skipped at `at`, pure. */
export function skipRun(run: PendingRun, skip: Skip, at: number): SkippedRun {
  return { ...run, state: 'skipped', outcome: skip.outcome, reason: skip.reason, endedAt: at };
}

/**
 * A pending run that waits for its lane (spec §5 `queue`, `cancelPrevious`), pure: since `at`
 * (UTC ms; a run queued again keeps its first instant), behind the lane's active run `behind`
 * (its correlation id; null for a backfill occurrence, which waits for its turn, issue #22).
 */
export function queueRun(run: PendingRun, at: number, behind: string | null): QueuedRun {
  return { ...run, state: 'queued', queuedAt: run.queuedAt ?? at, waitingBehind: behind };
}

/**
 * A waiting run as another worker takes it over to give it its lane (spec §5: the active run
 * ended), pure: it stays queued, held by `workerId`, until its admission starts it.
 */
export function promoteRun(run: QueuedRun, workerId: string): QueuedRun {
  return { ...run, workerId };
}

/** Whether a run is pending: claimed or queued, not started yet. */
export function isPending(run: Run): run is PendingRun {
  return run.state === 'claimed' || run.state === 'queued';
}
