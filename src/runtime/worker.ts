import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { GroupRecords } from '../fencing/group-records.js';
import { DEFAULT_FENCE_GRACE_MS, LEASE_LOST, TAKEOVER_MARGIN_MS } from '../fencing/lease.js';
import { endLeftoverGroups } from '../fencing/leftovers.js';
import { SelfFence } from '../fencing/self-fence.js';
import { Sentinel } from '../fencing/sentinel.js';
import { type Liveness, leaseLiveness } from '../store/liveness.js';
import type { StoreHolder } from '../store/owner.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import { bootstrapProjects } from './bootstrap.js';
import { ClockWatch, DEFAULT_CLOCK_JUMP_THRESHOLD_MS } from './clock-jumps.js';
import type { Runtime } from './context.js';
import { Executor } from './executor.js';
import type { RunFaults } from './faults.js';
import { releaseQueued } from './handoff.js';
import { missingStartLine } from './lost-start.js';
import { releaseUnentered } from './one-shot-refusal.js';
import { type Backoff, RECORD_RETRY } from './record-retry.js';
import { resumeClaimed } from './resume.js';
import { schedulerOfRun } from './run-scheduler.js';
import { sweep } from './sweeper.js';
import { Ticker, type TickResult } from './ticker.js';

/** Options of the scheduling loop. Durations are milliseconds. */
export interface WorkerOptions {
  /** Longest sleep between two looks at the store (a change another process made shows within it). */
  readonly maxSleepMs?: number;
  /** How often expired documents and feed lines are deleted (decisions §2: at least once a minute). */
  readonly sweepEveryMs?: number;
  /** How often this worker renews its lease. */
  readonly heartbeatMs?: number;
  /**
   * This worker's lease: it fences itself (ends its runs) before its heartbeat is this old, and
   * the others take its runs over once another worker's heartbeat is older than this plus
   * `takeoverMarginMs` (decisions §5). Every worker of a store should use the same value.
   */
  readonly leaseTtlMs?: number;
  /**
   * How long past the lease the others wait before they take a silent worker's runs over:
   * room for wall clocks that read apart; default {@link TAKEOVER_MARGIN_MS}. Every worker of a
   * store should use the same value; SQLite's takeover of a store waits it too.
   */
  readonly takeoverMarginMs?: number;
  /**
   * SIGTERM → SIGKILL of each process group when this worker fences itself; the fence begins
   * this much plus 500 ms before the lease expires. Default {@link DEFAULT_FENCE_GRACE_MS}.
   */
  readonly fenceGraceMs?: number;
  /**
   * True when no other worker can be alive at start (SQLite: the one serving process of its store,
   * see {@link Worker.takeStore}, decisions §5): whatever a previous process left is recovered at
   * once instead of after its lease lapses.
   */
  readonly exclusive?: boolean;
  /**
   * How far ahead of an occurrence it is claimed, milliseconds: the claim and the preparation of
   * its start happen before the instant, and at the instant only the start is written. 0 claims
   * at the occurrence. An occurrence claimed ahead fires with its scheduler as it was at the claim,
   * unless the scheduler was deleted or disabled since (then it is recorded skipped).
   * Default {@link DEFAULT_ACQUIRE_AHEAD_MS}.
   */
  readonly acquireAheadMs?: number;
  /** Fault points for tests. */
  readonly faults?: RunFaults;
  /** First delay before retrying a failed spawn, milliseconds (doubling, 5 retries, at most a minute). */
  readonly spawnRetryBaseMs?: number;
  /** Backoff of a record (a batch's starts, a run's end) the store refused; default {@link RECORD_RETRY}. */
  readonly recordRetry?: Backoff;
  /**
   * A jump of the wall clock against the monotonic clock between two passes beyond this,
   * milliseconds, is logged, and after a jump back next runs are recomputed (see {@link ClockWatch});
   * default {@link DEFAULT_CLOCK_JUMP_THRESHOLD_MS}.
   */
  readonly clockJumpThresholdMs?: number;
  /**
   * The host's boot-time clock, milliseconds, suspend included (default: Linux's, from
   * `/proc/uptime`): a renewal later than the lease and the takeover margin by it stops the runs
   * (see `SelfFence.lapsedBefore`). Tests step one of their own.
   */
  readonly bootClock?: () => number | undefined;
}

/**
 * The default fire-ahead window of the loop, milliseconds: longer than claiming and preparing a
 * second's due set takes (tens of ms for thousands), short enough that a document changed in it
 * is rare; see {@link WorkerOptions.acquireAheadMs}.
 */
export const DEFAULT_ACQUIRE_AHEAD_MS = 500;

/**
 * The first pause of the loop after a failed pass, milliseconds; it doubles with each further
 * failure up to `maxSleepMs`, so a store that comes back is used again within one `maxSleepMs`.
 */
const LOOP_RETRY_BASE_MS = 50;
/** What a reap's scheduler load answers for a run it deferred (a store error, issue #20). */
const DEFERRED = Symbol('deferred');
/** How many of its own stranded runs a worker recovers in one pass: a tick's claim (ticker BATCH). */
const RECOVER_LIMIT = 1000;
/** How many runs (and processes, and workflow steps) of lost workers one reap reads of each kind. */
const LOST_LIMIT = 1000;

/**
 * How long past the lease (`leaseTtlMs`) a SQLite store stays with its serving process before a
 * newcomer may take it over, milliseconds: the takeover margin of every worker's runs
 * ({@link TAKEOVER_MARGIN_MS}, decisions §5, {@link Worker.takeStore}).
 */
export const STORE_MARGIN_MS = TAKEOVER_MARGIN_MS;

/** What a reap found and did. */
export interface ReapResult {
  /** Runs of dead workers that were running: ended `failed`, reason `worker-lost`. */
  readonly lost: number;
  /**
   * Runs a dead worker had claimed but not started, and manual fires (which no worker holds
   * yet): taken over and started here, once.
   */
  readonly resumed: number;
}

/**
 * The long-running scheduler (the imperative shell): registers itself as a worker, bootstraps
 * every active project, then sleeps until the earliest `nextRunAt` of the store (capped,
 * re-checked on every wake and on every change notification), ticks, renews its lease, finishes
 * the work of dead workers, and repeats. Only this loop and the adapters read the clock and sleep.
 */
export class Worker {
  /** This worker's id: `wrk_<host>_<pid>_<random>`. */
  readonly id: string;
  readonly executor: Executor;
  readonly ticker: Ticker;
  readonly #options: Required<
    Omit<WorkerOptions, 'faults' | 'spawnRetryBaseMs' | 'recordRetry' | 'bootClock'>
  >;
  readonly #clocks: ClockWatch;
  #stopping = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  // The start-up in progress or done (see start), never rejecting: stop() waits for it.
  #starting: Promise<void> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;
  #lastSweep = Number.NEGATIVE_INFINITY;
  #lastReap = Number.NEGATIVE_INFINITY;
  #changed = false;
  #registered = false;
  #serving = false;
  #markLost: () => void = () => {};
  readonly #fence: SelfFence;
  // The store's record of the process groups this worker's runs start (decisions §5 fencing).
  readonly #groupRecords: GroupRecords;
  // Ends this worker's process groups when it dies, on any host (decisions §5 fencing).
  readonly #sentinel: Sentinel;
  /**
   * Resolves when this worker learned that another process took its SQLite store over (see
   * {@link takeStore}): it has stopped claiming; the caller stops it and exits.
   */
  readonly lost: Promise<void>;

  constructor(
    private readonly rt: Runtime,
    options: WorkerOptions = {},
  ) {
    this.id = `wrk_${hostname()}_${process.pid}_${randomBytes(4).toString('hex')}`;
    this.#options = {
      maxSleepMs: options.maxSleepMs ?? 1000,
      sweepEveryMs: options.sweepEveryMs ?? 30_000,
      heartbeatMs: options.heartbeatMs ?? 1000,
      leaseTtlMs: options.leaseTtlMs ?? 5000,
      takeoverMarginMs: options.takeoverMarginMs ?? TAKEOVER_MARGIN_MS,
      fenceGraceMs: options.fenceGraceMs ?? DEFAULT_FENCE_GRACE_MS,
      exclusive: options.exclusive ?? false,
      acquireAheadMs: options.acquireAheadMs ?? DEFAULT_ACQUIRE_AHEAD_MS,
      clockJumpThresholdMs: options.clockJumpThresholdMs ?? DEFAULT_CLOCK_JUMP_THRESHOLD_MS,
    };
    this.executor = new Executor(
      rt,
      this.id,
      options.faults,
      {
        attempts: 5,
        baseMs: options.spawnRetryBaseMs ?? 1000,
        maxMs: 60_000,
      },
      options.recordRetry ?? RECORD_RETRY,
    );
    this.ticker = new Ticker(rt, this.executor, this.id, options.faults);
    this.#fence = new SelfFence(this.executor.lease, this.executor.calls, {
      leaseTtlMs: this.#options.leaseTtlMs,
      graceMs: this.#options.fenceGraceMs,
      workerId: this.id,
      log: rt.log,
      stopRuns: (graceMs) => this.executor.stopAll(LEASE_LOST, graceMs),
      ...(options.bootClock === undefined ? {} : { bootClock: options.bootClock }),
    });
    this.#groupRecords = new GroupRecords(
      rt,
      this.id,
      this.executor.groups,
      options.recordRetry ?? RECORD_RETRY,
    );
    this.#sentinel = new Sentinel(this.executor.groups, {
      graceMs: this.#options.fenceGraceMs,
      workerId: this.id,
      log: rt.log,
    });
    this.#clocks = new ClockWatch(rt, this.#options.clockJumpThresholdMs);
    this.lost = new Promise((resolve) => {
      this.#markLost = resolve;
    });
  }

  /**
   * Makes this worker the one serving process of its SQLite store (decisions §5), registers it
   * and starts renewing its lease: what a serving process does first, so that a second one is
   * refused before it reaps, listens or writes anything. The lease is this worker's heartbeat,
   * recorded in the store (see {@link StoreOwner.take}); the store may be taken once the
   * heartbeat is older than `leaseTtlMs` + `takeoverMarginMs` by the wall clock.
   *
   * A holder whose lease has not lapsed yet is watched for up to `waitMs` milliseconds (timers;
   * default: until a dead holder's lease has lapsed): one that renews is alive, and this worker is
   * refused at once; one that does not (a process killed a moment ago, as before a restart) is
   * taken over when its lease lapses. A worker whose store was taken over (it stalled that long)
   * can no longer write a run; its next heartbeat learns it, and it stops claiming, ends its
   * processes (`worker-lost`) and resolves {@link lost}. {@link stop} releases the store.
   *
   * @throws UrsaError `STORE_LOCKED` naming the holder when another process serves the store.
   */
  async takeStore(waitMs = this.#deadAfterMs + this.#options.heartbeatMs): Promise<void> {
    const { repos, clock, log } = this.rt;
    const me = { id: this.id, host: hostname(), pid: process.pid };
    const leaseMs = this.#deadAfterMs;
    const deadline = performance.now() + waitMs;
    let first: StoreHolder | undefined;
    for (;;) {
      const sent = SelfFence.now();
      const holder = await repos.owner.take(me, clock.now(), leaseMs);
      if (holder === undefined) {
        this.#fence.renewed(sent);
        break;
      }
      const left = deadline - performance.now();
      if (first === undefined) {
        first = holder;
        log.info(
          { holder: holder.workerId, host: holder.host, pid: holder.pid },
          'the SQLite store has a serving process: waiting to see it renew its lease or let it lapse',
        );
      } else if (holder.heartbeatAt !== first.heartbeatAt || holder.workerId !== first.workerId) {
        throw repos.owner.locked(holder);
      }
      if (left <= 0) throw repos.owner.locked(holder);
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.#options.heartbeatMs, left)));
    }
    this.#registered = true;
    this.#serving = true;
    this.#renewLease();
  }

  // The lease is renewed on its own timer from registration on: a bootstrap that validates
  // thousands of documents, or a long tick, must not let it lapse. From then on the worker fences
  // itself when its renewals fail (decisions §5).
  #renewLease(): void {
    this.#heartbeat ??= setInterval(() => {
      this.heartbeat().catch((error: unknown) => this.rt.log.error({ err: error }, 'heartbeat failed'));
    }, this.#options.heartbeatMs);
    this.#fence.arm();
    this.#sentinel.start();
  }

  // Another worker is dead once its heartbeat is older than this: the lease and the margin that
  // lets its self-fence (and clocks that read apart) come first.
  get #deadAfterMs(): number {
    return this.#options.leaseTtlMs + this.#options.takeoverMarginMs;
  }

  /**
   * One pass: claim and dispatch whatever is due now, and within the next `aheadMs` milliseconds
   * (see {@link Ticker.tick}); also what tests call, with a stepped clock.
   */
  tick(aheadMs = 0): Promise<TickResult> {
    return this.ticker.tick(aheadMs);
  }

  /**
   * Start-up before the first tick: register this worker (its lease), finish what dead workers
   * left (all others, when `exclusive`), their leftover processes on this host first, then
   * refresh every active project (spec §8 bootstrap).
   */
  async bootstrap(): Promise<void> {
    await this.#register();
    await this.reap(this.#options.exclusive);
    await this.#bootstrapRefresh();
  }

  // Spec §8 bootstrap: every project brought in line with its documents, then the schedulers due
  // soonest checked into the tick's cache (issue #11).
  async #bootstrapRefresh(): Promise<void> {
    await bootstrapProjects(this.rt);
    await this.ticker.seed();
  }

  async #register(): Promise<void> {
    if (this.#registered) return;
    const sent = SelfFence.now();
    await this.rt.repos.workers.register({
      id: this.id,
      host: hostname(),
      pid: process.pid,
      startedAt: this.rt.clock.now(),
    });
    this.#registered = true;
    this.#fence.renewed(sent);
  }

  /**
   * Renews this worker's lease at the clock's instant. A fenced worker (its renewals failed until
   * its fence) holds its lease again once one succeeds.
   */
  async heartbeat(): Promise<void> {
    const sent = SelfFence.now();
    const sentBoot = this.#fence.bootTime();
    // Unrenewed past the takeover by the boot-time clock (the host was suspended, so the monotonic
    // deadlines stood still): the others may run its runs now, retired or not. Fenced before the
    // renewal is sent, so that a store slow to answer after the wake holds nothing back.
    if (this.#fence.fenceIfLapsed(sentBoot, this.#deadAfterMs))
      this.rt.log.error(
        { worker: this.id },
        'this worker could not renew its lease for longer than the lease and the takeover margin (its host was suspended): it stopped what it was running',
      );
    if (await this.rt.repos.workers.heartbeat(this.id, this.rt.clock.now())) {
      this.#fence.renewed(sent, sentBoot);
      return;
    }
    if (this.#serving) {
      // Another process took the SQLite store over: this one must not claim again.
      this.rt.log.error(
        { worker: this.id },
        'another process took this SQLite store over after this worker stalled past its lease; stopping',
      );
      this.#stopping = true;
      this.#wake?.();
      this.executor.stopAll('worker-lost');
      this.#markLost();
      return;
    }
    // This worker stalled past its lease and the others ended its runs: its processes are not its any more.
    this.rt.log.error({ worker: this.id }, 'this worker was retired as lost; stopping what it was running');
    this.executor.stopAll('worker-lost');
    // Registered live again by this renewal: it claims again.
    this.#fence.renewed(sent, sentBoot);
  }

  /**
   * Finishes the work of workers whose lease lapsed (decisions §5): first the process groups
   * they left running on this host are ended (see `endLeftoverGroups`); then their running runs end
   * `failed` with reason `worker-lost` (process, END line, run log) and free the overlap slot;
   * runs they claimed but never started (and manual fires, which no worker holds yet) are taken
   * over and dispatched here; waiting runs whose lane is free get their turn; stop requests for
   * processes running here are applied. Each exactly once: every step is a compare-and-swap on
   * the run's state and worker. Who is dead is decided by each of these reads as it runs
   * (`Liveness`), never by a list read before the leftovers were ended.
   *
   * @param othersDead treat every other worker as dead (a SQLite store at start).
   * @throws a store error, after the rest of the reap, when one met loading a run's scheduler
   *   deferred that run: it stays claimed or queued, held here, for the next pass (issue #20).
   */
  async reap(othersDead = false): Promise<ReapResult> {
    const { repos, clock, log } = this.rt;
    await this.heartbeat();
    const now = clock.now();
    // Not a list of live workers read once: each statement below decides who is dead as it runs,
    // so a worker that registers or renews while the leftovers are ended (seconds) keeps its work.
    const liveness: Liveness = othersDead
      ? { kind: 'only', workerId: this.id }
      : leaseLiveness(now, this.#deadAfterMs);
    let lost = 0;
    let resumed = 0;
    // Manual fires are handed to workers this way: routine, not the work of a lost worker; so are
    // the queued runs a worker released when it stopped.
    let manualFires = 0;
    let released = 0;
    // A store error loading a run's scheduler defers that run (it stays claimed or queued, held
    // here) and fails this reap once the rest is done, so that the next pass tries it again.
    let deferred: unknown;
    const defer = (error: unknown): typeof DEFERRED => {
      deferred ??= error;
      return DEFERRED;
    };
    const lostRuns = await repos.runs.orphaned('started', liveness, LOST_LIMIT);
    const lostSteps = await repos.workflowRuns.lostSteps(liveness, LOST_LIMIT);
    // What lost workers left running on this host ends before any of their work is ended or resumed.
    await endLeftoverGroups(this.rt, liveness, { runs: lostRuns, steps: lostSteps });
    // Read again after the leftovers (seconds): a run whose worker renewed meanwhile is its own
    // again. Only runs whose processes were looked for above are ended.
    const looked = new Set(lostRuns.map((run) => run.correlationId));
    const stillLost = looked.size === 0 ? [] : await repos.runs.orphaned('started', liveness, LOST_LIMIT);
    for (const run of stillLost) {
      if (looked.has(run.correlationId) && (await this.#endLost(run, now, defer))) lost++;
    }
    // Claimed runs of lost workers (and manual fires): a few queries for the lot. A store error
    // reading their schedulers takes none of them over; it fails this reap once the rest is done.
    const orphans = await repos.runs.orphaned('claimed', liveness, LOST_LIMIT);
    const taken = await resumeClaimed(this.rt, this.executor, orphans, {
      takeOver: true,
      stopping: () => this.#stopping,
    }).catch((error: unknown) => {
      defer(error);
      return { resumed: 0, manualFires: 0 };
    });
    resumed += taken.resumed;
    manualFires += taken.manualFires;
    // Waiting runs whose lane is free (after a restart, or whose active run ended on a lost worker).
    for (const waiting of await repos.lanes.waitingWithoutActive(100)) {
      const run = await repos.runs.get(waiting.correlationId);
      if (run !== undefined && (await this.executor.promoteWaiting(run).catch(defer)) === true) {
        resumed++;
        if (waiting.workerId === null) released++;
      }
    }
    // This worker's own runs that no dispatch of its carries any more (a store error cut it short):
    // as many as a tick claims, so that one pass recovers a whole claim (issue #12). A run
    // dispatched when the read began is carried, even if it ended before the read returned: the
    // read shows it as it was (a noop run is claimed, started and ended within one read).
    const carried = this.executor.dispatchingNow();
    for (const run of await repos.runs.heldBy(this.id, ['claimed', 'started'], RECOVER_LIMIT)) {
      if (
        carried.has(run.correlationId) ||
        this.executor.dispatching(run.correlationId) ||
        (run.processId !== null && this.executor.runsProcess(run.processId))
      )
        continue;
      if (run.state === 'claimed') {
        const scheduler = await schedulerOfRun(this.rt.repos, run).catch(defer);
        if (scheduler !== undefined && scheduler !== DEFERRED) {
          this.executor.start(run, scheduler);
          resumed++;
        }
      } else if (await this.#endLost(run, now, defer)) {
        lost++;
      }
    }
    // Processes whose run another worker already ended, or whose worker is gone.
    for (const processId of await repos.processes.orphaned(liveness, LOST_LIMIT)) {
      if (this.executor.runsProcess(processId)) continue;
      await repos.processes.transition(processId, ACTIVE_STATUSES, {
        status: 'failed',
        ended_at: now,
        reason: 'worker-lost',
      });
    }
    // Workflow runs of dead workers end failed; the scheduler runs that held them ended above.
    for (const id of await repos.workflowRuns.orphaned(liveness, 100)) {
      if (await repos.workflowRuns.end(id, 'failed', 'worker-lost', now)) lost++;
    }
    await this.executor.applyStopRequests();
    const retired = othersDead ? [] : await repos.workers.retireLapsed(now, this.#deadAfterMs);
    const takenOver = resumed - manualFires - released;
    if (lost + takenOver + retired.length > 0)
      log.warn({ lost, resumed: takenOver, retired }, 'finished the work of lost workers');
    if (manualFires > 0) log.info({ manualFires }, 'manual fires dispatched');
    if (released > 0) log.info({ queued: released }, 'queued runs of a stopped worker resumed');
    if (deferred !== undefined) throw deferred;
    return { lost, resumed };
  }

  /** Bootstraps and runs the loop until {@link stop}. */
  start(): Promise<void> {
    const starting = this.#startUp();
    // stop() waits for it (see #starting); a failed start is the caller's to hear of.
    this.#starting = starting.catch(() => {});
    return starting;
  }

  async #startUp(): Promise<void> {
    await this.#register();
    this.#renewLease();
    // A store that fails during start-up (down, locked) is retried as a failed pass of the loop is,
    // until it answers or the worker is stopped (issue #12).
    for (let failures = 0; !this.#stopping; ) {
      try {
        await this.reap(this.#options.exclusive);
        if (this.#stopping) return;
        await this.#bootstrapRefresh();
        const unsubscribe = await this.rt.repos.store.onChange(() => {
          // A change may be a manual fire or a stop request: look at once, not at the next heartbeat.
          // The flag outlives a notification that arrives while the loop is busy (no lost wake-up).
          this.#changed = true;
          this.#wake?.();
        });
        // Stopped meanwhile: stop() found no loop to wait for, so none is started.
        if (this.#stopping) {
          await unsubscribe();
          return;
        }
        this.#unsubscribe = unsubscribe;
        this.#loop = this.#run();
        return;
      } catch (error) {
        await this.#failedPass(error, ++failures);
      }
    }
  }

  /**
   * Graceful stop (decisions §5): stop claiming, let running processes finish within the
   * grace period, then stop them (outcome `cancelled`, reason `shutdown`); nothing is left running.
   * A start-up in progress is let reach a safe point first, so that no run its reap dispatches
   * starts after the drain (issue #20).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#starting;
    await this.#loop;
    await this.executor.drain(this.rt.settings.shutdownGraceMs);
    // Its runs have ended: the sentinel is told goodbye and signals nothing.
    await this.#sentinel.stop();
    await this.#groupRecords.stop();
    // Its queued runs wait for the next worker, and say so (issue #20).
    await releaseQueued(this.rt, this.executor.recorder, this.id);
    clearInterval(this.#heartbeat);
    await this.#fence.stop();
    await this.#unsubscribe?.();
    await this.rt.repos.workers.stop(this.id, this.rt.clock.now());
    if (this.#serving) await this.rt.repos.owner.release(this.id);
  }

  async #run(): Promise<void> {
    const { clock, repos, log } = this.rt;
    // Consecutive failed passes (the store unreachable, full or locked), and the clock's instant of the first.
    let failures = 0;
    let failingSince = 0;
    while (!this.#stopping) {
      if (!this.executor.lease.held) {
        // Fenced: no claim and no takeover until a renewal (on its own timer) succeeds.
        await this.#pause(this.#options.heartbeatMs);
        continue;
      }
      try {
        const ahead = this.#options.acquireAheadMs;
        await this.#clocks.check();
        await this.tick(ahead);
        const now = clock.now();
        if (this.#changed || now - this.#lastReap >= this.#options.heartbeatMs) {
          this.#changed = false;
          this.#lastReap = now;
          await this.reap();
          await repos.store.checkpoint();
        }
        if (now - this.#lastSweep >= this.#options.sweepEveryMs) {
          this.#lastSweep = now;
          const swept = await sweep(this.rt, now);
          if (swept.documents + swept.feedLines > 0)
            log.info(swept, 'expired documents and feed lines deleted');
        }
        const earliest = await repos.schedules.earliestNextRunAt();
        if (failures > 0) {
          log.warn({ failures, downMs: clock.now() - failingSince }, 'scheduler loop recovered');
          failures = 0;
        }
        const max = this.#options.maxSleepMs;
        // Sleeps are timers (monotonic) capped at maxSleepMs; every wake decides anew by the clock,
        // so a wall clock that jumps either way is noticed within one cap (issue #12).
        await this.#sleep(
          earliest === null ? max : Math.min(Math.max(earliest - ahead - clock.now(), 0), max),
        );
      } catch (error) {
        if (failures === 0) failingSince = clock.now();
        // What a failed reap left (a run it could not load the scheduler of, a promotion) is
        // looked at again in the next pass, not a heartbeat of the clock later (issue #20).
        this.#lastReap = Number.NEGATIVE_INFINITY;
        await this.#failedPass(error, ++failures);
      }
    }
  }

  // A pass that failed (`failures` in a row): counted, logged the 1st, 2nd, 4th, 8th … time (an
  // outage of an hour is a dozen lines, not thousands), then a backoff before the next.
  async #failedPass(error: unknown, failures: number): Promise<void> {
    this.rt.metrics?.storeErrors.inc();
    if ((failures & (failures - 1)) === 0)
      this.rt.log.error({ err: error, failures }, 'scheduler loop error; retrying');
    await this.#sleep(Math.min(LOOP_RETRY_BASE_MS * 2 ** (failures - 1), this.#options.maxSleepMs));
  }

  #sleep(ms: number): Promise<void> {
    if (this.#changed) return Promise.resolve();
    return this.#pause(ms);
  }

  // A sleep that a stop ends, but a change notification does not.
  #pause(ms: number): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  // `defer` takes a store error met loading the scheduler of the run waiting behind it (see reap).
  async #endLost(run: Run, now: number, defer: (error: unknown) => unknown): Promise<boolean> {
    const { repos, log } = this.rt;
    // A one-shot whose process never ran is not used up (spec §10a): released and tried again.
    if (await releaseUnentered(this.rt, this.executor.recorder, run, undefined, 'worker-lost', false))
      return true;
    // The run's end, END line and final log in one transaction (spec §9a): a store that fails
    // here leaves the run started and orphaned, and the next reap ends it.
    const ended: Run = { ...run, state: 'ended', outcome: 'failed', reason: 'worker-lost', endedAt: now };
    const details = { processId: run.processId, reason: 'worker-lost' };
    // A run recorded started always shows its START line before its END line (issue #20).
    const opening = await missingStartLine(this.rt, run);
    if (!(await this.executor.recorder.endFailed(ended, 'started', details, opening))) return false;
    if (run.processId !== null) {
      await repos.processes.transition(run.processId, ACTIVE_STATUSES, {
        status: 'failed',
        ended_at: now,
        reason: 'worker-lost',
      });
    }
    log.warn(
      { scheduler: run.name, correlationId: run.correlationId, worker: run.workerId },
      'its worker was lost',
    );
    // Its lane is free now: a run waiting behind it gets its turn here.
    await this.executor.promoteWaiting(run).catch(defer);
    return true;
  }
}
