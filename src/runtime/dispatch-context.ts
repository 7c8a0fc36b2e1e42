import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { EngineResult } from '../engines/engine.js';
import type { EngineCalls } from '../fencing/engine-calls.js';
import type { LeaseGate } from '../fencing/lease-gate.js';
import type { FencedRun, PendingRun, Run } from '../runs/run.js';
import type { PendingJudgements } from './admission-order.js';
import type { Runtime } from './context.js';
import type { Drain } from './drain.js';
import { type RunFaults, SimulatedCrash } from './faults.js';
import type { LocalProcesses } from './local-processes.js';
import { type Backoff, persistRecord } from './record-retry.js';
import type { RunRecorder } from './recorder.js';
import type { RunEnds } from './run-ends.js';
import type { StartLead } from './start-lead.js';
import type { StartQueue } from './start-queue.js';
import type { WorkflowRunner } from './workflow-runner.js';

/** A claimed (or waiting) run to dispatch, with the checked scheduler it was claimed for. */
export interface Dispatch {
  readonly run: PendingRun;
  readonly scheduler: EffectiveScheduler;
}

/**
 * What the parts of the dispatcher share (see `Executor`, which builds it): the worker's
 * runtime, its bookkeeping of runs in flight, and the two ways back into the coordinator
 * (`start` a run, `promoteWaiting` a lane's waiting run).
 */
export interface DispatchContext {
  readonly rt: Runtime;
  /** The worker this executor runs for: only runs it holds are moved (decisions §5). */
  readonly workerId: string;
  readonly faults: RunFaults;
  /** Backoff of a failing spawn: `attempts` retries, from `baseMs` doubling up to `maxMs`. */
  readonly retry: Backoff;
  /** Backoff of a record the store refused (see `RECORD_RETRY`). */
  readonly recordRetry: Backoff;
  readonly recorder: RunRecorder;
  /** Whether this worker holds its lease: nothing is started or entered while it does not. */
  readonly lease: LeaseGate;
  /** The engine calls in flight (decisions §5 fencing). */
  readonly calls: EngineCalls;
  readonly workflows: WorkflowRunner;
  readonly processes: LocalProcesses;
  readonly drain: Drain;
  readonly ends: RunEnds;
  readonly lead: StartLead;
  /** The batch start transactions, a few at a time; the ends give way while more wait. */
  readonly starts: StartQueue;
  /** The manual fires being dispatched here, until their lane judged them. */
  readonly judgements: PendingJudgements;
  /** The correlation ids of the runs being dispatched here. */
  readonly inflight: Set<string>;
  /** Dispatches a run in the background (see `Executor.start`). */
  start(run: PendingRun, scheduler: EffectiveScheduler): void;
  /** Gives a scheduler's lane to its waiting run (see `Executor.promoteWaiting`). */
  promoteWaiting(
    run: Pick<Run, 'tenant' | 'project' | 'name'>,
    scheduler?: EffectiveScheduler,
  ): Promise<boolean>;
  /**
   * Retries a run whose attempt failed, if its scheduler's `retry` leaves one (see `nextAttempt`);
   * false when no further attempt ran, and the caller ends the run.
   */
  nextAttempt(
    failed: FencedRun<string>,
    scheduler: EffectiveScheduler,
    result: EngineResult,
    endedAt: number,
  ): Promise<boolean>;
  /** Tracks a background task until it settles (see `Executor.settled`); its error is logged. */
  track(task: Promise<void>): void;
}

/**
 * Runs `write` until it succeeds: a record of what already happened is retried while the store
 * fails (down, full, locked; issue #12), by `recordRetry`, until a drain's grace period ended.
 * Rethrows the last error when the attempts are spent.
 */
export function persist<T>(
  ctx: DispatchContext,
  what: string,
  write: (attempt: number) => Promise<T>,
): Promise<T> {
  return persistRecord(what, write, {
    backoff: ctx.recordRetry,
    signal: ctx.drain.stopped,
    log: ctx.rt.log,
    fatal: (error) => error instanceof SimulatedCrash,
  });
}
