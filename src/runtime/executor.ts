import type { EffectiveScheduler } from '../catalog/catalog.js';
import { EngineCalls } from '../fencing/engine-calls.js';
import { killAfterGrace } from '../fencing/fence-kill.js';
import { LeaseGate } from '../fencing/lease-gate.js';
import { RunningGroups } from '../fencing/running-groups.js';
import type { PendingRun } from '../runs/run.js';
import type { Run } from '../store/runs.js';
import { PendingJudgements } from './admission-order.js';
import { retryHandedOff } from './agent-retry.js';
import { startBatch } from './batch-start.js';
import type { Runtime } from './context.js';
import type { Dispatch, DispatchContext } from './dispatch-context.js';
import { Drain } from './drain.js';
import { endFailedAndPromote, type FailedEnd } from './failed-end.js';
import type { RunFaults } from './faults.js';
import { SHUTDOWN_REASON } from './final-stop.js';
import { fireInstantOf } from './fire-instant.js';
import { LocalProcesses } from './local-processes.js';
import { nextAttempt } from './next-attempt.js';
import { type Backoff, RECORD_RETRY } from './record-retry.js';
import { RunRecorder } from './recorder.js';
import { RunEnds } from './run-ends.js';
import { dispatchWithRetry } from './spawn-retry.js';
import { StartLead } from './start-lead.js';
import { StartQueue } from './start-queue.js';
import { promoteWaiting } from './waiting.js';
import { WorkflowRunner } from './workflow-runner.js';

/** The first system session name of a scheduler (spec §6); later versions add `_v2`, `_v3`, … */
export function systemSessionName(scheduler: string): string {
  return `_ursascheduler_${scheduler}`;
}

/**
 * Dispatches claimed runs — from a tick, a catch-up, a manual fire or a waiting run's turn —
 * through one path: the scheduler's lane decides with its overlap policy (spec §5); a started
 * run gets a process in the scheduler's system session (spec §6), runs on its engine, and every
 * transition is recorded as feed lines (spec §7) and the run log (spec §9a).
 *
 * The coordinator of the dispatcher's parts, each a file of its own: the admission through the
 * lane (`admission.ts`, with the spawn's retries in `spawn-retry.ts`), the batch start
 * (`batch-start.ts`), the one way a started recipe run goes on from there, a single start being
 * a batch of one (`enter.ts`, with `engine-call.ts` and `launch.ts`), the
 * targets' ends (`run-ends.ts`), the one-shot's bookkeeping (`one-shot-start.ts`), the workflow
 * target (`workflow-target.ts`), the waiting run's turn (`waiting.ts`), the recovery of a run
 * that cannot end by its engine (`failed-end.ts`), the processes running here and their stop
 * requests (`local-processes.ts`), and the drain (`drain.ts`).
 */
export class Executor {
  readonly #tasks = new Set<Promise<void>>();
  readonly #inflight = new Set<string>();
  readonly #drain: Drain;
  readonly #processes: LocalProcesses;
  readonly #ctx: DispatchContext;

  readonly recorder: RunRecorder;
  /**
   * The OS process groups this executor's runs and workflow steps have running (decisions §5
   * fencing): added when an engine reports one, removed once that engine returned.
   */
  readonly groups = new RunningGroups();
  /**
   * The engine calls of this executor's runs and workflow steps in flight, each with its process
   * groups or none (decisions §5 fencing: what the lease watchdog can end, and what only this
   * thread can abort).
   */
  readonly calls = new EngineCalls(this.groups);
  /** Whether this worker holds its lease: nothing is started or entered while it does not. */
  readonly lease = new LeaseGate();
  /** Runs the workflow runs this worker's schedulers start (spec §4.2). */
  readonly workflows: WorkflowRunner;

  constructor(
    private readonly rt: Runtime,
    /** The worker this executor runs for: only runs it holds are moved (decisions §5). */
    readonly workerId: string,
    faults: RunFaults = {},
    /** Backoff of a failing spawn: `attempts` retries, from `baseMs` doubling up to `maxMs`. */
    retry: Backoff = { attempts: 5, baseMs: 1000, maxMs: 60_000 },
    /** Backoff of a record the store refused (see {@link RECORD_RETRY}). */
    recordRetry: Backoff = RECORD_RETRY,
  ) {
    this.recorder = new RunRecorder(rt);
    this.workflows = new WorkflowRunner(rt, workerId, { calls: this.calls, lease: this.lease });
    this.#drain = new Drain(rt.clock);
    this.#processes = new LocalProcesses(rt, this.#drain.stopped);
    const starts = new StartQueue();
    this.#ctx = {
      rt,
      workerId,
      faults,
      retry,
      recordRetry,
      recorder: this.recorder,
      lease: this.lease,
      calls: this.calls,
      workflows: this.workflows,
      processes: this.#processes,
      drain: this.#drain,
      ends: new RunEnds(rt, this.recorder, starts),
      lead: new StartLead(),
      starts,
      judgements: new PendingJudgements(),
      inflight: this.#inflight,
      start: (run, scheduler) => this.start(run, scheduler),
      promoteWaiting: (run, scheduler) => this.promoteWaiting(run, scheduler),
      nextAttempt: (failed, scheduler, result, endedAt) =>
        nextAttempt(this.#ctx, failed, scheduler, result, endedAt),
      track: (task) => this.#track(task),
    };
  }

  /** How many processes this executor is running now. */
  get active(): number {
    return this.#processes.size;
  }

  /** Dispatches a run this worker holds, in the background; returns at once. Nothing starts while draining. */
  start(run: PendingRun, scheduler: EffectiveScheduler): void {
    if (this.#drain.draining.aborted) return;
    const { judgements } = this.#ctx;
    this.#inflight.add(run.correlationId);
    if (run.trigger === 'manual') judgements.dispatching(run.correlationId);
    this.#track(
      dispatchWithRetry(this.#ctx, run, scheduler).finally(() => {
        this.#inflight.delete(run.correlationId);
        judgements.judged(run.correlationId);
      }),
    );
  }

  /**
   * Dispatches the runs one tick claimed (issue #4): the cron runs whose engine is registered
   * start together, one batch per instant they start at (`batch-start.ts`: one transaction for the
   * lot, then every engine is entered), and everything else (one-shots, workflow targets, fault
   * points set, a run a batch defers, a batch the store failed) goes through {@link start} one at
   * a time. Returns at once.
   */
  startMany(items: readonly Dispatch[]): void {
    if (this.#drain.draining.aborted) return;
    const batches = new Map<number, Dispatch[]>();
    for (const item of items) {
      const { definition, recipe } = item.scheduler;
      const batchable =
        this.#ctx.faults.beforeSpawn === undefined &&
        definition.trigger.kind === 'cron' &&
        recipe !== undefined &&
        this.rt.engines.get(recipe.engine) !== undefined;
      if (batchable) {
        this.#inflight.add(item.run.correlationId);
        // One batch per instant the runs start at: their occurrence, or later with jitter.
        const at = fireInstantOf(item.run, item.scheduler);
        const batch = batches.get(at) ?? [];
        batch.push(item);
        batches.set(at, batch);
      } else {
        this.start(item.run, item.scheduler);
      }
    }
    // A run of a batch handed to the one-at-a-time path, which takes over its in-flight mark.
    const startSingly = ({ run, scheduler }: Dispatch) => {
      this.#inflight.delete(run.correlationId);
      this.start(run, scheduler);
    };
    for (const [dueAt, batch] of batches) this.#track(startBatch(this.#ctx, batch, dueAt, startSingly));
  }

  /** Whether a dispatch of the run is in progress here (so the worker does not recover it as stuck). */
  dispatching(correlationId: string): boolean {
    return this.#inflight.has(correlationId);
  }

  /**
   * The correlation ids of the runs being dispatched here now, as a copy: what a reap compares
   * its read of the store with, since a run dispatched when the read began may have ended since.
   */
  dispatchingNow(): ReadonlySet<string> {
    return new Set(this.#inflight);
  }

  /** How many dispatches (a run, or a batch of runs) wait for the instant they start at. */
  get waitingForInstant(): number {
    return this.#drain.waiting;
  }

  /** Resolves when everything dispatched so far has been recorded (including waiting runs it started). */
  async settled(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
  }

  /**
   * Stops a process this worker runs (spec §5 `processStop`); false when it does not run here.
   * Stopping one that already ended is not an error.
   */
  stopLocal(processId: string, reason: string): boolean {
    return this.#processes.stop(processId, reason);
  }

  /**
   * Stops every process this executor runs, its workflow steps' too (its lease was lost, or it was
   * retired). With `killAfterMs` (a self-fence: its grace, milliseconds), every process group that
   * runs now and still runs that much later gets SIGKILL from here, whatever grace its engine
   * gives a stop of its own: the fence ends them before the lease expires (decisions §5).
   */
  stopAll(reason: string, killAfterMs?: number): void {
    this.#processes.stopAll(reason);
    void this.workflows.stopAll(reason);
    if (killAfterMs !== undefined) killAfterGrace(this.groups, killAfterMs);
  }

  /** Whether this executor runs the process now: a run's, or a workflow step's. */
  runsProcess(processId: string): boolean {
    return this.#processes.has(processId) || this.workflows.runsStep(processId);
  }

  /** Stops the local processes for which a stop was requested on any worker (`processes.stop_requested_at`). */
  applyStopRequests(): Promise<number> {
    return this.#processes.applyStopRequests();
  }

  /**
   * Waits up to `graceMs` for runs claimed ahead to reach their instant and start, and for
   * running processes to end; then stops the rest (reason `shutdown`) and waits for them.
   */
  drain(graceMs: number): Promise<void> {
    return this.#drain.drain(graceMs, {
      settled: () => this.settled(),
      stopRunning: async () => {
        this.#processes.stopAll(SHUTDOWN_REASON);
        await this.workflows.shutDown(SHUTDOWN_REASON);
      },
    });
  }

  /** Gives the lane of a scheduler to its waiting run, if any: see `waiting.ts`. */
  promoteWaiting(
    run: Pick<Run, 'tenant' | 'project' | 'name'>,
    scheduler?: EffectiveScheduler,
  ): Promise<boolean> {
    return promoteWaiting(this.#ctx, run, scheduler);
  }

  /**
   * Ends a run `failed` that cannot end by its engine, marks its process failed and gives its lane
   * to its waiting run: see `failed-end.ts`. Whether this call ended it.
   */
  endFailed(run: Run, end: FailedEnd): Promise<boolean> {
    return endFailedAndPromote(this.#ctx, run, end);
  }

  /**
   * Retries an agent run that failed at its service, when this worker holds it and its scheduler's
   * `retry` leaves an attempt: see `agent-retry.ts`. Whether a retry was taken on.
   */
  retryHandedOff(run: Run, reason: string): Promise<boolean> {
    return retryHandedOff(this.#ctx, run, reason);
  }

  /**
   * Runs `deliver` (what a pass sends to agent services: stops, answers) beside the loop, so that
   * a slow or silent service holds up no tick and no reap (issue #25). One at a time: a pass
   * while one runs sends nothing more, and the next pass after it carries on. `settled` waits
   * for it.
   */
  deliverAside(deliver: () => Promise<unknown>): void {
    if (this.#delivering) return;
    this.#delivering = true;
    this.#track(
      deliver()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.rt.log.warn({ err: error }, 'delivering to agent services failed; the next pass tries again'),
        )
        .finally(() => {
          this.#delivering = false;
        }),
    );
  }

  #delivering = false;

  #track(task: Promise<void>): void {
    const tracked = task
      .catch((error: unknown) => this.rt.log.error({ err: error }, 'run dispatch failed unexpectedly'))
      .finally(() => this.#tasks.delete(tracked));
    this.#tasks.add(tracked);
  }
}
