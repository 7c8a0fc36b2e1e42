import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { type EffectiveScheduler, recipeOf } from '../catalog/catalog.js';
import { WITHDRAWN } from '../decisions/admission.js';
import { type EngineResult, runEngine } from '../engines/engine.js';
import { isRefusal } from '../errors/index.js';
import { EngineCalls } from '../fencing/engine-calls.js';
import { killAfterGrace } from '../fencing/fence-kill.js';
import { LEASE_LOST } from '../fencing/lease.js';
import { LeaseGate } from '../fencing/lease-gate.js';
import { RunningGroups } from '../fencing/running-groups.js';
import { schedulerPath } from '../scheduler/document.js';
import { feedRow } from '../store/feed.js';
import { fenceOf } from '../store/fencing.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import { schedulerKeyString } from '../store/schedules.js';
import type { Session } from '../store/sessions.js';
import type { WorkflowRun } from '../store/workflow-runs.js';
import { formatInstant } from '../time/instant.js';
import { sleep } from '../time/sleep.js';
import { admitInOrder, type FirstFire, PendingJudgements } from './admission-order.js';
import { Batcher } from './batcher.js';
import type { Runtime } from './context.js';
import { type RunFaults, SimulatedCrash } from './faults.js';
import { runController, SHUTDOWN_REASON, stoppedBeforeEntry } from './final-stop.js';
import { oneShotRefusal, refuseOneShot, releasedUnentered, releaseUnentered } from './one-shot-refusal.js';
import { type Backoff, persistRecord, RECORD_RETRY } from './record-retry.js';
import { feedLineOf, RunRecorder } from './recorder.js';
import { openingOf, projectKey, runParams, workflowStartRecord } from './run-records.js';
import { schedulerOfRun } from './run-scheduler.js';
import { StartLead } from './start-lead.js';
import { scheduleWithdrawn, skipQueuedOfDeleted } from './withdrawn.js';
import { type StartedWorkflow, WorkflowRunner } from './workflow-runner.js';

const OUTCOME_OF = { done: 'completed', failed: 'failed', stopped: 'cancelled' } as const;

/** The first system session name of a scheduler (spec §6); later versions add `_v2`, `_v3`, … */
export function systemSessionName(scheduler: string): string {
  return `_ursascheduler_${scheduler}`;
}

/**
 * Resolves once `clock` reaches `instant` (UTC ms), to the millisecond: a timer to
 * {@link SPIN_MS} before it, then turns of the event loop. A process woken from a timer may run a
 * millisecond or two late (the timer's own rounding, and the OS scheduling a sleeping process on
 * a busy machine); one that is already running is not.
 */
async function reach(clock: Runtime['clock'], instant: number): Promise<void> {
  for (let ms = instant - clock.now(); ms > 0; ms = instant - clock.now())
    await new Promise((resolve) =>
      ms > SPIN_MS ? setTimeout(resolve, Math.min(ms - SPIN_MS, MAX_WAIT_MS)) : setImmediate(resolve),
    );
}

/** How long before an instant {@link reach} stops sleeping and turns the event loop, milliseconds. */
const SPIN_MS = 3;

/**
 * The longest timer of a wait for an instant, milliseconds: timers are monotonic, the instant is
 * the wall clock's, so a wait re-reads the clock at least this often and a clock set back (or
 * forward) is followed within it, not a timer's full length later (issue #12).
 */
const MAX_WAIT_MS = 1000;

/** A claimed run to dispatch, with the checked scheduler it was claimed for. */
interface Dispatch {
  readonly run: Run;
  readonly scheduler: EffectiveScheduler;
}

/** A run as it ends, with what its engine said (a recipe target) or its workflow run (a workflow target). */
interface Ended {
  readonly run: Run;
  readonly scheduler: EffectiveScheduler;
  readonly result?: EngineResult;
  readonly workflowRun?: WorkflowRun | undefined;
}

interface Running {
  readonly controller: AbortController;
  readonly processId: string;
}

/**
 * Dispatches claimed runs — from a tick, a catch-up, a manual fire or a waiting run's turn —
 * through one path: the scheduler's lane decides with its overlap policy (spec §5); a started
 * run gets a process in the scheduler's system session (spec §6), runs on its engine, and every
 * transition is recorded as feed lines (spec §7) and the run log (spec §9a).
 */
export class Executor {
  readonly #tasks = new Set<Promise<void>>();
  // By process id: two attempts of one run are two processes (the stale one is stopped alone).
  readonly #running = new Map<string, Running>();
  readonly #inflight = new Set<string>();
  // Aborted when a drain begins: no new starts, no promotions, and backoff sleeps end.
  readonly #draining = new AbortController();
  // Aborted when a drain's grace period ends: runs claimed ahead and still waiting stay claimed.
  readonly #stopped = new AbortController();
  // The waits of runs claimed ahead of their instant (see #until).
  readonly #held = new Set<Promise<boolean>>();

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
  readonly #ends = new Batcher<Ended, boolean>((ends) => this.#writeEnds(ends));
  readonly #lead = new StartLead();
  // The manual fires being dispatched here, until their lane judged them (see #judgeFirst).
  readonly #judgements = new PendingJudgements();
  // Runs whose engine has returned and whose end is not written yet, by scheduler key: their lane
  // is free in fact but not yet in the store, so a start of the same scheduler waits for the write.
  readonly #ending = new Map<string, Promise<void>>();

  constructor(
    private readonly rt: Runtime,
    /** The worker this executor runs for: only runs it holds are moved (decisions §5). */
    readonly workerId: string,
    private readonly faults: RunFaults = {},
    /** Backoff of a failing spawn: `attempts` retries, from `baseMs` doubling up to `maxMs`. */
    private readonly retry: Backoff = { attempts: 5, baseMs: 1000, maxMs: 60_000 },
    /** Backoff of a record the store refused (see {@link RECORD_RETRY}). */
    private readonly recordRetry: Backoff = RECORD_RETRY,
  ) {
    // Every run waiting for its instant or a retry listens on these: hundreds at once are normal.
    setMaxListeners(0, this.#draining.signal, this.#stopped.signal);
    this.recorder = new RunRecorder(rt);
    this.workflows = new WorkflowRunner(rt, workerId, { calls: this.calls, lease: this.lease });
  }

  /** How many processes this executor is running now. */
  get active(): number {
    return this.#running.size;
  }

  /** Dispatches a run this worker holds, in the background; returns at once. Nothing starts while draining. */
  start(run: Run, scheduler: EffectiveScheduler): void {
    if (this.#draining.signal.aborted) return;
    this.#inflight.add(run.correlationId);
    if (run.trigger === 'manual') this.#judgements.dispatching(run.correlationId);
    this.#track(
      this.#dispatchWithRetry(run, scheduler).finally(() => {
        this.#inflight.delete(run.correlationId);
        this.#judgements.judged(run.correlationId);
      }),
    );
  }

  /**
   * Dispatches the runs one tick claimed (issue #4): the cron runs whose engine is registered
   * start together through `Lanes.startMany` — one transaction for the lot, then every engine is
   * entered — and everything else (one-shots, an overlap the policy does not start, fault points
   * set, a batch the store failed) goes through {@link start} one at a time. Returns at once.
   */
  startMany(items: readonly Dispatch[]): void {
    if (this.#draining.signal.aborted) return;
    const batches = new Map<number, Dispatch[]>();
    for (const item of items) {
      const { definition, recipe } = item.scheduler;
      const batchable =
        this.faults.beforeSpawn === undefined &&
        definition.trigger.kind === 'cron' &&
        recipe !== undefined &&
        this.rt.engines.get(recipe.engine) !== undefined;
      if (batchable) {
        this.#inflight.add(item.run.correlationId);
        const batch = batches.get(item.run.scheduledFor) ?? [];
        batch.push(item);
        batches.set(item.run.scheduledFor, batch);
      } else {
        this.start(item.run, item.scheduler);
      }
    }
    for (const [dueAt, batch] of batches) this.#track(this.#startBatch(batch, dueAt));
  }

  // Hands a run of a batch to the one-at-a-time path (which takes over its in-flight mark).
  #startSingly(run: Run, scheduler: EffectiveScheduler): void {
    this.#inflight.delete(run.correlationId);
    this.start(run, scheduler);
  }

  /**
   * One batch: runs of one occurrence instant. What does not depend on the start instant
   * (sessions, retention) is read first; then, just before the occurrence (by the start
   * transaction's recent duration, {@link StartLead}), one transaction starts the lot, with their
   * processes and START lines, as of the occurrence's instant; at it every engine is entered; the
   * pending run logs are written last, off the start's path. A lane that frees within that lead,
   * and a run its lane must judge (a scheduler withdrawn, an earlier manual fire), is decided at
   * the instant by the single path.
   */
  async #startBatch(items: readonly Dispatch[], dueAt: number): Promise<void> {
    const { repos, clock, log } = this.rt;
    let started: { run: Run; scheduler: EffectiveScheduler; params: Record<string, unknown> }[];
    let outcomes: Awaited<ReturnType<typeof repos.lanes.startMany>>;
    const retention = new Map<string, number>();
    try {
      const keys = items.map(({ run }) => run);
      let sessions = await repos.sessions.currentSystemSessions(keys);
      // First fires get their first session together; then a changed runAs (rare) one at a time.
      const firsts = keys.filter((run) => !sessions.has(schedulerKeyString(run)));
      if (firsts.length > 0) {
        await repos.sessions.createFirstSystemSessions(firsts, clock.now());
        sessions = await repos.sessions.currentSystemSessions(keys);
      }
      for (const { run } of items) {
        const key = schedulerKeyString(run);
        if (sessions.get(key)?.ownerUser !== run.runAs)
          sessions.set(
            key,
            await repos.sessions.systemSession(run.tenant, run.project, run.name, run.runAs, clock.now()),
          );
      }
      for (const { run } of items) {
        const key = projectKey(run);
        if (!retention.has(key))
          retention.set(key, await this.recorder.retentionDays(run.tenant, run.project));
      }
      if (!(await this.#until(dueAt - this.#lead.ms(items.length)))) {
        // Stopped past the grace period: the runs stay claimed, and the next worker starts them.
        for (const { run } of items) this.#inflight.delete(run.correlationId);
        return;
      }
      await this.#endsWritten(items.map(({ run }) => run));
      // Fenced, or the drain's final stop came while this batch awaited the store: the runs stay
      // claimed, for this worker once it renews its lease, or for the next one.
      if (!this.lease.held || this.#stopped.signal.aborted) {
        for (const { run } of items) this.#inflight.delete(run.correlationId);
        return;
      }
      const began = performance.now();
      // The instant the engines are entered, written with the start (a lead ahead of it).
      const at = Math.max(dueAt, clock.now());
      started = items.map(({ run, scheduler }) => ({
        run: {
          ...run,
          state: 'started',
          sessionId: (sessions.get(schedulerKeyString(run)) as Session).id,
          processId: `proc_${randomUUID()}`,
          startedAt: at,
        },
        scheduler,
        params: runParams(scheduler),
      }));
      outcomes = await repos.lanes.startMany(
        started.map(({ run, scheduler, params }) => ({
          key: run,
          correlationId: run.correlationId,
          workerId: this.workerId,
          policy: scheduler.definition.overlap,
          oneShot: false,
          trigger: run.trigger,
          scheduledFor: run.scheduledFor,
          start: { sessionId: run.sessionId as string, processId: run.processId as string, at },
          // Its process and START line with it: a run whose engine is entered has both (issue #20).
          opening: openingOf(run, scheduler, params, 'running'),
        })),
        this.workerId,
        at,
      );
      this.#lead.observe(performance.now() - began, items.length);
    } catch (error) {
      // The store failed the batch: nothing of it was written; the single path retries each run.
      log.warn({ err: error, runs: items.length }, 'batch start failed; starting one run at a time');
      for (const { run, scheduler } of items) this.#startSingly(run, scheduler);
      return;
    }
    const launch = [];
    for (const [i, entry] of started.entries()) {
      const outcome = outcomes[i];
      // Not started here: the single path decides with the policy (or finds the run is not ours).
      if (outcome === 'deferred' || outcome === undefined)
        this.#startSingly((items[i] as Dispatch).run, entry.scheduler);
      // Registered before any await: a stop request from now on finds the process here.
      else {
        const run: Run = { ...entry.run, ...outcome };
        launch.push({ ...entry, run, controller: this.#register(run) });
      }
    }
    if (launch.length === 0) return;
    // Started durably a lead ahead, with their processes and START lines, so the engines are
    // entered at the occurrence itself (a crash in between ends the runs worker-lost, as one right
    // after the commit would); each run's start is that instant.
    const overran = clock.now() - dueAt;
    if (overran > 0)
      log.debug(
        { runs: launch.length, overranMs: overran, leadMs: this.#lead.ms(launch.length) },
        'batch start overran its lead',
      );
    await reach(clock, dueAt);
    // Their pending run logs are written meanwhile, and each run's end waits for them (a crash in
    // between ends the runs worker-lost, and the feed keeps the trace: spec §9a).
    let recordedNow: () => void = () => {};
    const recorded = new Promise<void>((resolve) => {
      recordedNow = resolve;
    });
    // Every engine is entered before any run's bookkeeping is chained, so a run's start is not
    // delayed by the promises of the runs entered before it.
    const entered = launch.map(({ run, scheduler, params, controller }) => ({
      run,
      scheduler,
      params,
      controller,
      running: this.#runEngine(run, scheduler, params, controller),
    }));
    // Runs whose engine already returned: their end writes the final run log, so no pending one.
    const returned = new Set<string>();
    for (const { run, scheduler, running } of entered) {
      const done = () => returned.add(run.correlationId);
      running.then(done, done);
      this.#track(
        this.#launched(run, scheduler, running, recorded).finally(() =>
          this.#inflight.delete(run.correlationId),
        ),
      );
    }
    await this.#confirmAttempts(entered)
      .then((ours) => this.#writePendingLogs(ours, retention, returned))
      .catch((error: unknown) =>
        log.error({ err: error, runs: entered.length }, 'could not write the pending run logs of a batch'),
      )
      .finally(recordedNow);
  }

  // Once the engines are entered (no query between the start and the instant): the attempts that
  // are still this worker's. One whose lease was taken over meanwhile (another worker ended the
  // run) has its process stopped at once (decisions §5 fencing); returns the others.
  async #confirmAttempts<T extends { run: Run; controller: AbortController }>(
    entered: readonly T[],
  ): Promise<T[]> {
    const ours = await this.#persist("the check of a batch's attempts", () =>
      this.rt.repos.lanes.currentAttempts(
        entered.map(({ run }) => ({ correlationId: run.correlationId, fencingToken: run.fencingToken })),
      ),
    );
    const mine = entered.filter(({ run }) => ours.has(run.correlationId));
    for (const { run, controller } of entered)
      if (!ours.has(run.correlationId)) controller.abort('worker-lost');
    return mine;
  }

  // The batch's pending run logs (its processes and START lines came with its start), retried
  // while the store fails, so that the runs' ends find them (issue #12).
  async #writePendingLogs(
    launched: readonly { run: Run; scheduler: EffectiveScheduler; params: Record<string, unknown> }[],
    retention: ReadonlyMap<string, number>,
    returned: ReadonlySet<string>,
  ): Promise<void> {
    const { repos } = this.rt;
    // One turn of the event loop first: an engine that returns at once (noop) has by then.
    await new Promise((resolve) => setImmediate(resolve));
    // A run that already ended has its final log (the end writes it whole): this one yields to it,
    // and one whose engine returned meanwhile is not rendered at all (a crash before its end is
    // written leaves its START line, and the recovery writes its log: spec §9a).
    const logs = launched.flatMap(({ run, scheduler }) => {
      if (returned.has(run.correlationId)) return [];
      const row = this.recorder.runLogRow(
        run,
        scheduler,
        retention.get(projectKey(run)) ?? -1,
        run.startedAt as number,
      );
      return row === undefined ? [] : [row];
    });
    await this.#persist('the pending run logs of a batch', () => repos.documents.createMissing(logs));
  }

  /**
   * Runs `write` until it succeeds: a record of what already happened is retried while the store
   * fails (down, full, locked; issue #12), by `recordRetry`, until a drain's grace period ended.
   * Rethrows the last error when the attempts are spent.
   */
  #persist<T>(what: string, write: (attempt: number) => Promise<T>): Promise<T> {
    return persistRecord(what, write, {
      backoff: this.recordRetry,
      signal: this.#stopped.signal,
      log: this.rt.log,
      fatal: (error) => error instanceof SimulatedCrash,
    });
  }

  /**
   * Resolves true once the clock reaches `instant` (UTC ms), checking the clock again after each
   * timer (a timer may fire early); false when a drain's grace period ends first. A drain waits
   * for these: an occurrence claimed ahead is started at its instant, as if claimed then.
   */
  #until(instant: number): Promise<boolean> {
    if (instant <= this.rt.clock.now()) return Promise.resolve(true);
    const wait = (async () => {
      for (;;) {
        if (this.#stopped.signal.aborted) return false;
        const ms = instant - this.rt.clock.now();
        if (ms <= 0) return true;
        await sleep(Math.min(ms, MAX_WAIT_MS), this.#stopped.signal);
      }
    })();
    this.#held.add(wait);
    return wait.finally(() => this.#held.delete(wait));
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

  /**
   * Dispatches a run; a spawn that fails (the store or the recipe lookup failing, say) is retried
   * with exponential backoff while the run is still claimed by this worker (spec §10a: a failed
   * spawn sets no marker and is retried). A run that took its lane and then failed is ended failed.
   * A drain cuts the backoff short and leaves the run claimed for the next worker.
   */
  async #dispatchWithRetry(run: Run, scheduler: EffectiveScheduler): Promise<void> {
    // A run claimed ahead of its occurrence starts at it, not before. (A manual fire's scheduledFor
    // is its occurrence key, which may lie 1 ms ahead of the clock: it starts at once.)
    if (run.trigger !== 'manual' && !(await this.#until(run.scheduledFor))) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.faults.beforeSpawn?.(run);
        await this.#dispatch(run, scheduler);
        return;
      } catch (error) {
        if (error instanceof SimulatedCrash) throw error;
        // A run yielding to this one goes on rather than wait out the backoff.
        this.#judgements.judged(run.correlationId);
        this.rt.log.warn(
          { err: error, correlationId: run.correlationId, attempt: attempt + 1 },
          'spawn failed',
        );
        let current: Run | undefined;
        try {
          current = await this.rt.repos.runs.get(run.correlationId);
        } catch (readError) {
          if (readError instanceof SimulatedCrash || isRefusal(readError)) throw readError;
          // The store is out of reach: the run stays as it is held, and the worker's reap recovers it.
          this.rt.log.warn(
            { err: readError, correlationId: run.correlationId },
            'could not read a run whose spawn failed; the next pass recovers it',
          );
          return;
        }
        if (current?.workerId !== this.workerId) return;
        if (current.state === 'claimed' && attempt < this.retry.attempts) {
          if (this.#draining.signal.aborted) return;
          const delay = Math.min(this.retry.baseMs * 2 ** attempt, this.retry.maxMs);
          await sleep(delay, this.#draining.signal);
          if (this.#draining.signal.aborted) return;
          continue;
        }
        // A one-shot whose process never ran is not used up (spec §10a): released, tried again;
        // when the store fails that too, the worker's reap finds it as it is.
        if (current.state === 'started') {
          const released = await this.#release(current, scheduler, 'spawn-failed', false).catch(
            (releaseError: unknown) => {
              if (releaseError instanceof SimulatedCrash) throw releaseError;
              this.rt.log.warn(
                { err: releaseError, correlationId: run.correlationId },
                'could not release a one-shot',
              );
              return undefined;
            },
          );
          if (released !== false) return;
        }
        if (current.state === 'claimed' || current.state === 'queued' || current.state === 'started') {
          await this.#endUnspawned(current);
        }
        return;
      }
    }
  }

  // The run cannot be spawned (retries spent, or it failed half-way after taking the lane): end
  // it visibly, so its lane is free and its user hears of it. The reason is fixed text: the
  // underlying error (maybe a driver's) goes only to the server log.
  async #endUnspawned(run: Run): Promise<void> {
    const { repos, clock } = this.rt;
    const now = clock.now();
    const reason = 'spawn-failed';
    // The end, END line and final log in one transaction (spec §9a): a store that fails here
    // leaves the run held here as it was, and the worker's reap finishes it.
    const ended: Run = {
      ...run,
      workerId: this.workerId,
      state: 'ended',
      outcome: 'failed',
      reason,
      endedAt: now,
    };
    if (!(await this.recorder.endFailed(ended, run.state, { processId: run.processId, reason }))) return;
    if (run.processId !== null) {
      await repos.processes.transition(run.processId, ACTIVE_STATUSES, {
        status: 'failed',
        ended_at: now,
        reason,
      });
    }
    await this.promoteWaiting(run);
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
    for (const running of this.#running.values()) {
      if (running.processId === processId) {
        running.controller.abort(reason);
        return true;
      }
    }
    return false;
  }

  /**
   * Stops every process this executor runs, its workflow steps' too (its lease was lost, or it was
   * retired). With `killAfterMs` (a self-fence: its grace, milliseconds), every process group that
   * runs now and still runs that much later gets SIGKILL from here, whatever grace its engine
   * gives a stop of its own: the fence ends them before the lease expires (decisions §5).
   */
  stopAll(reason: string, killAfterMs?: number): void {
    for (const { controller } of this.#running.values()) controller.abort(reason);
    void this.workflows.stopAll(reason);
    if (killAfterMs !== undefined) killAfterGrace(this.groups, killAfterMs);
  }

  /** Whether this executor runs the process now: a run's, or a workflow step's. */
  runsProcess(processId: string): boolean {
    for (const running of this.#running.values()) if (running.processId === processId) return true;
    return this.workflows.runsStep(processId);
  }

  /** Stops the local processes for which a stop was requested on any worker (`processes.stop_requested_at`). */
  async applyStopRequests(): Promise<number> {
    if (this.#running.size === 0) return 0;
    const ids = [...this.#running.values()].map((r) => r.processId);
    const requested = await this.rt.repos.processes.stopRequested(ids);
    for (const p of requested) this.stopLocal(p.id, p.stopReason ?? 'stopped');
    return requested.length;
  }

  /**
   * Waits up to `graceMs` for runs claimed ahead to reach their instant and start, and for
   * running processes to end; then stops the rest (reason `shutdown`) and waits for them.
   */
  async drain(graceMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    // Runs claimed ahead start at their instant (at most the fire-ahead window away).
    await Promise.race([Promise.all([...this.#held]), grace]);
    this.#draining.abort();
    await Promise.race([this.settled(), grace]);
    clearTimeout(timer);
    this.#stopped.abort();
    for (const { controller } of this.#running.values()) controller.abort(SHUTDOWN_REASON);
    await this.workflows.shutDown(SHUTDOWN_REASON);
    await this.settled();
  }

  /**
   * Gives the lane of a scheduler to its waiting run, if any (spec §5 `queue`, `cancelPrevious`):
   * takes the run over from whichever worker holds it (a compare-and-swap) and dispatches it here.
   *
   * @throws a store error met while loading its scheduler (when `scheduler` is not given): the run
   *   stays queued, held here, and the worker's next reap gives it its turn (issue #20).
   */
  async promoteWaiting(
    run: Pick<Run, 'tenant' | 'project' | 'name'>,
    scheduler?: EffectiveScheduler,
  ): Promise<boolean> {
    if (this.#draining.signal.aborted || !this.lease.held) return false;
    const { repos } = this.rt;
    const waiting = await repos.lanes.waiting(run);
    if (waiting === undefined) return false;
    if (!(await repos.runs.takeOver(waiting.correlationId, 'queued', waiting.workerId, this.workerId)))
      return false;
    const queued = await repos.runs.get(waiting.correlationId);
    const effective = scheduler ?? (await schedulerOfRun(this.rt.repos, run));
    if (queued === undefined) return false;
    if (effective === undefined) {
      // Its scheduler was deleted while it waited: recorded skipped, not left waiting (issue #20).
      await skipQueuedOfDeleted(this.rt, this.recorder, queued, this.workerId);
      return false;
    }
    this.start(queued, effective);
    return true;
  }

  /** Registers a process as running here; its controller stops it. */
  #register(run: Run): AbortController {
    const controller = runController(this.#stopped.signal);
    this.#running.set(run.processId as string, { controller, processId: run.processId as string });
    this.rt.metrics?.processes.set(this.#running.size);
    return controller;
  }

  #track(task: Promise<void>): void {
    const tracked = task
      .catch((error: unknown) => this.rt.log.error({ err: error }, 'run dispatch failed unexpectedly'))
      .finally(() => this.#tasks.delete(tracked));
    this.#tasks.add(tracked);
  }

  async #dispatch(held: Run, scheduler: EffectiveScheduler): Promise<void> {
    const { repos, clock } = this.rt;
    const { definition } = scheduler;
    // A one-shot that cannot start here is not consumed: released, and tried again later (spec §10a).
    const refusal = oneShotRefusal(this.rt, held, scheduler);
    if (refusal !== undefined) {
      await refuseOneShot(this.rt, this.recorder, held, scheduler, refusal, held.state);
      return;
    }
    // A workflow run has no scheduler session and no process of its own (spec §4.2).
    const workflow = definition.target.kind === 'workflow';
    // No session for a run whose scheduler was deleted (its sessions archived) or disabled since.
    const session =
      workflow || (await scheduleWithdrawn(this.rt, held))
        ? undefined
        : await repos.sessions.systemSession(held.tenant, held.project, held.name, held.runAs, clock.now());
    const processId = workflow ? null : `proc_${randomUUID()}`;
    await this.#endsWritten([held]);
    // Fenced, or the drain's final stop came while this dispatch awaited the store: the run stays
    // as it is held, for this worker once it renews its lease, or for the next one.
    if (!this.lease.held || this.#stopped.signal.aborted) return;
    const startedAt = (instant: number): Run => ({
      ...held,
      state: 'started',
      sessionId: session?.id ?? null,
      processId,
      startedAt: instant,
    });
    let at = clock.now();
    // In the order of request and occurrence instants: an earlier manual fire is judged first.
    const { decision, active, attempt } = await admitInOrder(
      (yielding) => {
        at = clock.now();
        return repos.lanes.admit({
          key: held,
          correlationId: held.correlationId,
          workerId: held.workerId,
          policy: definition.overlap,
          oneShot: definition.trigger.kind === 'at',
          trigger: held.trigger,
          scheduledFor: held.scheduledFor,
          yielding: yielding && !this.#draining.signal.aborted,
          start: { sessionId: session?.id ?? null, processId, at },
          // A recipe run's process and START line come with its start (issue #20).
          opening: workflow ? undefined : openingOf(startedAt(at), scheduler, runParams(scheduler), 'ready'),
        });
      },
      (first) => this.#judgeFirst(first, scheduler),
    );
    this.#judgements.judged(held.correlationId);
    switch (decision) {
      case 'lost':
        return;
      case 'deleted':
      case 'disabled': {
        // Deleted or disabled while claimed ahead or waiting in the queue: not started (issue #20).
        await this.recorder.recordSkipped(
          { ...held, state: 'skipped', ...WITHDRAWN[decision], endedAt: at },
          scheduler,
        );
        return;
      }
      case 'skip':
      case 'consolidate': {
        const outcome = decision === 'skip' ? 'skipped_overlap' : 'skipped_overlap_queued';
        await this.recorder.recordSkipped(
          { ...held, state: 'skipped', outcome, reason: 'overlap', endedAt: at },
          scheduler,
        );
        return;
      }
      case 'queue':
      case 'cancel': {
        await this.recorder.writeRunLog({ ...held, state: 'queued' }, undefined, scheduler);
        if (decision === 'cancel' && active?.processId) this.stopLocal(active.processId, 'scheduler-overlap');
        // The active run is a workflow run: its running step is stopped, wherever it runs.
        if (decision === 'cancel' && active !== undefined && active.processId === null)
          await repos.workflowRuns.requestStopFor(active.correlationId, at);
        this.rt.log.info(
          { scheduler: held.name, correlationId: held.correlationId, decision },
          'run waiting for its lane',
        );
        // The active run may have ended between the admission and now: then this one's turn is now.
        if ((await repos.runs.get(active?.correlationId ?? ''))?.state !== 'started')
          await this.promoteWaiting(held, scheduler);
        return;
      }
      case 'start': {
        const started: Run = { ...startedAt(at), ...attempt };
        await (workflow ? this.#runWorkflow(started, scheduler) : this.#run(started, scheduler));
      }
    }
  }

  /**
   * Has a manual fire requested before the run being admitted judged first (issue #20): one
   * dispatched here is waited for (until its lane judged it); any other is taken over (a
   * compare-and-swap: a worker that held it finds it gone) and dispatched here.
   */
  async #judgeFirst(first: FirstFire, scheduler: EffectiveScheduler): Promise<void> {
    if (this.#inflight.has(first.correlationId)) return this.#judgements.of(first.correlationId);
    const { runs } = this.rt.repos;
    if (this.#draining.signal.aborted) return;
    if (!(await runs.takeOver(first.correlationId, 'claimed', first.workerId, this.workerId))) return;
    const fire = await runs.get(first.correlationId);
    if (fire?.state !== 'claimed') return;
    this.start(fire, scheduler);
    await this.#judgements.of(fire.correlationId);
  }

  async #run(started: Run, scheduler: EffectiveScheduler): Promise<void> {
    const { repos } = this.rt;
    const processId = started.processId as string;
    const params = runParams(scheduler);
    // Its process and START line came with its start, under its lane's lock: a cancelPrevious run
    // admitted since found the process and marked its stop (applied when the engine is entered).
    await this.recorder.writeRunLog(started, await repos.processes.get(processId), scheduler);
    let entry: (entered: boolean) => void = () => {};
    const entered = new Promise<boolean>((resolve) => {
      entry = resolve;
    });
    const running = this.#runEngine(started, scheduler, params, undefined, entry);
    await this.#launched(started, scheduler, running, undefined, entered);
  }

  /**
   * A started run of a workflow target (spec §4.2): starts the workflow run with the scheduler's
   * params as its parameters (`initialMessage` is not used), writes the START line with the
   * `workflowRunId`, and holds the scheduler's lane until the workflow run ends; the END line and
   * the run log follow it to its end. Switched off by the operator (`workflows: false`), or a
   * workflow that cannot start: the run ends failed with the reason.
   */
  async #runWorkflow(started: Run, scheduler: EffectiveScheduler): Promise<void> {
    const { definition } = scheduler;
    const target = definition.target as { readonly kind: 'workflow'; readonly workflow: string };
    let handle: StartedWorkflow | undefined;
    let refusal: string | undefined;
    if (this.rt.settings.workflowsEnabled === false) {
      refusal = 'workflows are switched off by the operator (workflows: false)';
    } else {
      try {
        handle = await this.workflows.start(
          started.tenant,
          started.project,
          target.workflow,
          definition.params,
          started.runAs,
          started.correlationId,
          { fencingToken: started.fencingToken as number, attempt: started.attempt },
        );
      } catch (error) {
        if (!isRefusal(error)) throw error;
        refusal = `workflow ${target.workflow} cannot start: ${error.message}`;
      }
    }
    if (handle === undefined) {
      if (started.trigger === 'at' && refusal !== undefined) {
        // Spec §10a: a one-shot whose workflow cannot start is not consumed either.
        if (await refuseOneShot(this.rt, this.recorder, started, scheduler, refusal, 'started'))
          await this.promoteWaiting(started, scheduler);
        return;
      }
      const now = this.rt.clock.now();
      const ended: Run = {
        ...started,
        state: 'ended',
        outcome: 'failed',
        reason: refusal ?? null,
        endedAt: now,
      };
      if (await this.recorder.endFailed(ended, 'started', { reason: ended.reason }))
        await this.promoteWaiting(ended, scheduler);
      return;
    }
    const workflowRunId = handle.run.id;
    let ours: boolean;
    try {
      ours = await this.rt.repos.lanes.recordWorkflowStart(
        workflowStartRecord(started, workflowRunId, target.workflow),
      );
    } catch (error) {
      // Its start unrecorded, the run is ended by the caller: its workflow run ends first, so
      // that the lane is never free while a step of it still runs.
      this.workflows.stopLocal(workflowRunId, 'spawn-failed');
      await handle.done;
      throw error;
    }
    // Another worker took the run over since it was admitted: its workflow run must not go on.
    if (!ours) {
      this.workflows.stopLocal(workflowRunId, 'worker-lost');
      return;
    }
    // From here only the workflow run's end ends the run: the pending log is a courtesy.
    await this.recorder.writeRunLog(started, undefined, scheduler, handle.run).catch((error: unknown) => {
      if (error instanceof SimulatedCrash) throw error;
      this.rt.log.warn(
        { err: error, correlationId: started.correlationId },
        'could not write a pending run log',
      );
    });
    this.rt.log.info(
      { scheduler: started.name, correlationId: started.correlationId, workflowRunId },
      'run started',
    );
    if (definition.trigger.kind === 'at') await this.#oneShotUsedUp(started, scheduler);
    const { status, reason } = await handle.done;
    const outcome = status === 'completed' ? 'completed' : status === 'cancelled' ? 'cancelled' : 'failed';
    const run: Run = { ...started, state: 'ended', outcome, reason, endedAt: this.rt.clock.now() };
    const ended = this.#ended(run, async () => {
      return this.#persist('the end of a run', async () => {
        const workflowRun = await this.rt.repos.workflowRuns.get(run.tenant, workflowRunId);
        return this.#ends.add({ run, scheduler, workflowRun });
      });
    });
    if (!(await ended)) return;
    this.rt.metrics?.runs.inc({ outcome, trigger: run.trigger });
    this.rt.log.info(
      { scheduler: run.name, correlationId: run.correlationId, workflowRunId, outcome, reason },
      'run ended',
    );
    if (outcome === 'failed') await this.recorder.notifyFailed(run, run.endedAt as number);
    await this.promoteWaiting(run, scheduler);
  }

  /** {@link releaseUnentered}, retried while the store fails (see {@link #persist}). */
  #release(
    run: Run,
    scheduler: EffectiveScheduler,
    reason: string,
    knownUnentered: boolean,
  ): Promise<boolean> {
    return this.#persist('the release of a one-shot', () =>
      releaseUnentered(this.rt, this.recorder, run, scheduler, reason, knownUnentered),
    );
  }

  /**
   * {@link #oneShotStarted} for a one-shot whose process or workflow run is under way: a store
   * error is logged, never taken for a failed start (the run goes on and ends by its engine), and
   * the next refresh of its project marks and trashes it (it finds the started run).
   */
  async #oneShotUsedUp(started: Run, scheduler: EffectiveScheduler): Promise<void> {
    try {
      await this.#oneShotStarted(started, scheduler);
    } catch (error) {
      if (error instanceof SimulatedCrash) throw error;
      this.rt.log.warn(
        { err: error, scheduler: started.name, correlationId: started.correlationId },
        'could not mark the one-shot fired; the next refresh of its project does',
      );
    }
  }

  /**
   * A one-shot's bookkeeping once it started (spec §10a order: spawn, then the fired marker, then
   * the trash — a crash between any two heals at the next refresh instead of running it again),
   * and an inbox item when it started later than the misfire threshold (spec §12).
   */
  async #oneShotStarted(started: Run, scheduler: EffectiveScheduler): Promise<void> {
    const { repos, clock, settings } = this.rt;
    const { definition } = scheduler;
    if (definition.trigger.kind !== 'at') return;
    const startedAt = started.startedAt as number;
    // Spec §10a order: spawn, then the fired marker, then the trash — a crash between any two
    // heals at the next refresh instead of running the one-shot again.
    await this.faults.afterSpawn?.(started);
    await repos.projects.markFired(
      started.tenant,
      started.project,
      started.name,
      definition.trigger.instant,
      started.correlationId,
      clock.now(),
    );
    await this.faults.afterMarker?.(started);
    if (scheduler.source === 'project') {
      // A spawned one-shot leaves the scheduler prefix (spec §10a); its history stays in the feed.
      await repos.documents.trash(
        { tenant: started.tenant, project: started.project, path: schedulerPath(started.name) },
        clock.now(),
      );
    }
    const lateMs = startedAt - started.scheduledFor;
    if (lateMs > settings.misfireThresholdMs) {
      await repos.inbox.add({
        tenant: started.tenant,
        user: started.runAs,
        kind: 'one-shot-late',
        title: `${started.name} ran ${Math.round(lateMs / 60_000)} minutes late`,
        body: `The one-shot scheduler ${started.name} was due at ${formatInstant(started.scheduledFor)} and started at ${formatInstant(startedAt)}, more than the misfire threshold after it.`,
        project: started.project,
        scheduler: started.name,
        correlationId: started.correlationId,
        logPath: started.logPath,
        createdAt: startedAt,
      });
    }
  }

  /**
   * A started run from its engine's call on: one-shot bookkeeping once `entered` says the engine
   * was entered (spec §10a: spawn, then the marker), and the end (process, run, END line, run log,
   * the lane's next run). After the entry only the engine's return ends the run: a store error in
   * the bookkeeping is logged and left to the next refresh, which heals a started one-shot. A
   * one-shot that never entered its engine for this worker's reasons (see `releasedUnentered`, or
   * a store error before the entry) is released, not used up. A batch start's process row and
   * START line are written meanwhile by `recorded`.
   */
  async #launched(
    started: Run,
    scheduler: EffectiveScheduler,
    running: Promise<EngineResult>,
    recorded?: Promise<unknown>,
    entered: Promise<boolean> = Promise.resolve(true),
  ): Promise<void> {
    const { clock, log } = this.rt;
    const { definition } = scheduler;
    const processId = started.processId as string;
    const startedAt = started.startedAt as number;
    this.rt.metrics?.lateness.observe(
      { trigger: started.trigger },
      (startedAt - started.scheduledFor) / 1000,
    );
    log.info(
      {
        scheduler: started.name,
        correlationId: started.correlationId,
        processId,
        scheduledFor: formatInstant(started.scheduledFor),
        coalesced: started.coalesced,
      },
      'run started',
    );
    const oneShot = definition.trigger.kind === 'at';
    if (oneShot && (await entered)) await this.#oneShotUsedUp(started, scheduler);

    let result: EngineResult;
    try {
      result = await running;
    } catch (error) {
      // The store failed its spawn before the engine's entry (spec §10a: no marker, it remains).
      if (error instanceof SimulatedCrash || !oneShot || (await entered)) throw error;
      await this.#release(started, scheduler, 'spawn-failed', true);
      return;
    }
    if (oneShot && !(await entered) && releasedUnentered(result.reason)) {
      await this.#release(started, scheduler, result.reason as string, true);
      return;
    }
    const endedAt = clock.now();
    const outcome = OUTCOME_OF[result.status];
    const reason = result.reason ?? null;
    const run: Run = { ...started, state: 'ended', outcome, reason, endedAt };
    const written = this.#ended(run, async () => {
      await this.faults.beforeEnd?.(run);
      // Its process row and START line first (a batch writes them while the engines run).
      await recorded;
      return this.#persist('the end of a run', () => this.#ends.add({ run, scheduler, result }));
    });
    // Another worker already ended it (this worker's lease lapsed): its END line stands.
    if (!(await written)) return;
    this.rt.metrics?.runs.inc({ outcome, trigger: run.trigger });
    log.info(
      {
        scheduler: run.name,
        correlationId: run.correlationId,
        processId,
        outcome,
        durationMs: endedAt - startedAt,
        reason,
      },
      'run ended',
    );
    if (outcome === 'failed') await this.recorder.notifyFailed(run, endedAt);
    // Only queue and cancelPrevious leave a run waiting (one left by a policy changed since is
    // found by the worker's periodic look for waiting runs).
    if (definition.overlap !== 'skip') await this.promoteWaiting(run, scheduler);
  }

  /** Runs `write` (the end of `run`'s record) as the pending end of its scheduler's lane, see #ending. */
  #ended<T>(run: Run, write: () => Promise<T>): Promise<T> {
    const key = schedulerKeyString(run);
    const done = write();
    const settled = done.then(
      () => {},
      () => {},
    );
    this.#ending.set(key, settled);
    void settled.then(() => {
      if (this.#ending.get(key) === settled) this.#ending.delete(key);
    });
    return done;
  }

  /** Resolves once the pending ends of these runs' schedulers (engines returned here) are written. */
  async #endsWritten(runs: readonly Run[]): Promise<void> {
    const pending = runs.flatMap((run) => this.#ending.get(schedulerKeyString(run)) ?? []);
    if (pending.length > 0) await Promise.all(pending);
  }

  /** Writes the ends of one turn's runs together (see `Runs.endMany`); per run, whether it ended here. */
  async #writeEnds(ends: readonly Ended[]): Promise<boolean[]> {
    const retention = new Map<string, number>();
    for (const { run } of ends) {
      const key = projectKey(run);
      if (!retention.has(key)) retention.set(key, await this.recorder.retentionDays(run.tenant, run.project));
    }
    const now = this.rt.clock.now();
    const ended = await this.rt.repos.runs.endMany(
      ends.map(({ run, result, scheduler, workflowRun }) => {
        const endedAt = run.endedAt as number;
        const process =
          result === undefined
            ? undefined
            : {
                id: run.processId as string,
                status: result.status,
                endedAt,
                exitCode: result.exitCode ?? null,
                reason: run.reason,
                outputTail: result.output ?? null,
                errorTail: result.errorOutput ?? null,
              };
        const details =
          workflowRun === undefined
            ? {
                processId: run.processId,
                durationMs: endedAt - (run.startedAt as number),
                exitCode: process?.exitCode ?? null,
                reason: run.reason,
              }
            : {
                workflowRunId: workflowRun.id,
                durationMs: endedAt - (run.startedAt as number),
                reason: run.reason,
              };
        return {
          run,
          process,
          line: feedRow(feedLineOf(run, 'END', endedAt, run.outcome, details)),
          log: this.recorder.runLogRow(
            run,
            scheduler,
            retention.get(projectKey(run)) ?? -1,
            now,
            process,
            workflowRun,
          ),
        };
      }),
    );
    return ends.map(({ run }) => ended.has(run.correlationId));
  }

  /**
   * Runs `run`'s engine and resolves to what it returned, or to why it was not entered. `entry` is
   * told once, at the engine's entry (true) or when the run ends without entering it (false).
   */
  async #runEngine(
    run: Run,
    scheduler: EffectiveScheduler,
    params: Readonly<Record<string, unknown>>,
    registered: AbortController | undefined,
    entry: (entered: boolean) => void = () => {},
  ): Promise<EngineResult> {
    const { repos, clock } = this.rt;
    const processId = run.processId as string;
    const recipe = recipeOf(scheduler);
    const engine = this.rt.engines.get(recipe.engine);
    if (engine === undefined) {
      this.#running.delete(processId);
      entry(false);
      return { status: 'failed', reason: `engine ${JSON.stringify(recipe.engine)} is not registered` };
    }
    const controller = registered ?? this.#register(run);
    try {
      if (registered === undefined) {
        // Not ours any more (another worker ended the run since it was admitted): nothing starts.
        const ours = await repos.processes.transition(
          processId,
          ['ready'],
          { status: 'running', started_at: clock.now() },
          fenceOf(run),
        );
        if (!ours) controller.abort('worker-lost');
        // A stop requested before the process was registered here (cancelPrevious from another worker).
        const [requested] = await repos.processes.stopRequested([processId]);
        if (requested !== undefined) controller.abort(requested.stopReason ?? 'stopped');
      }
      // Checked in the same turn as the engine's entry: no process starts once the lease is lost.
      if (!this.lease.held) controller.abort(LEASE_LOST);
      // Stopped before its engine was entered (a final stop, a stop request): nothing starts.
      const stopped = stoppedBeforeEntry(controller.signal);
      if (stopped !== undefined) return stopped;
      // In flight from here until it returns; without a process group, only this thread can stop it.
      this.calls.enter(processId);
      const running = runEngine(engine, {
        processId,
        recipe,
        params,
        initialMessage: scheduler.definition.initialMessage,
        context: {
          tenant: run.tenant,
          project: run.project,
          scheduler: run.name,
          correlationId: run.correlationId,
          scheduledFor: run.scheduledFor,
          runAs: run.runAs,
          fencingToken: run.fencingToken as number,
          attempt: run.attempt,
        },
        signal: controller.signal,
        report: (status) => {
          this.#track(
            repos.processes.transition(processId, ACTIVE_STATUSES, { status }, fenceOf(run)).then(() => {}),
          );
        },
        spawned: (pgid) => this.calls.spawned(processId, pgid),
      });
      entry(true);
      this.faults.afterStart?.(run);
      return await running;
    } finally {
      entry(false);
      this.calls.returned(processId);
      this.#running.delete(processId);
      this.rt.metrics?.processes.set(this.#running.size);
    }
  }
}
