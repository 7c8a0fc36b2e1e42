import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LOST_WORK_AFTER_STOP_MS, scansLostWork } from '../decisions/lost-work.js';
import { GroupRecords } from '../fencing/group-records.js';
import { LEASE_LOST } from '../fencing/lease.js';
import { SelfFence } from '../fencing/self-fence.js';
import { Sentinel } from '../fencing/sentinel.js';
import { bootstrapProjects } from './bootstrap.js';
import { ClockWatch } from './clock-jumps.js';
import type { Runtime } from './context.js';
import { Executor } from './executor.js';
import { releaseQueued } from './handoff.js';
import { type ReapResult, reap } from './reap.js';
import { RECORD_RETRY } from './record-retry.js';
import { sweep } from './sweeper.js';
import { takeStore } from './take-store.js';
import { PREPARE_HORIZON_MS, PREPARE_SLACK_MS, Ticker, type TickResult } from './ticker.js';
import { type LoopSettings, loopSettings, type WorkerOptions } from './worker-options.js';

export type { ReapResult } from './reap.js';
export { DEFAULT_ACQUIRE_AHEAD_MS, STORE_MARGIN_MS, type WorkerOptions } from './worker-options.js';

/**
 * The first pause of the loop after a failed pass, milliseconds; it doubles with each further
 * failure up to `maxSleepMs`, so a store that comes back is used again within one `maxSleepMs`.
 */
const LOOP_RETRY_BASE_MS = 50;

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
  readonly #options: LoopSettings;
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
  // When a reap last looked for lost workers' work (decisions/lost-work.ts).
  #lastLostScan = Number.NEGATIVE_INFINITY;
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
    this.#options = loopSettings(options);
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
    this.ticker = new Ticker(rt, this.executor, this.id, () => this.#deadAfterMs, options.faults);
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
    const me = { id: this.id, host: hostname(), pid: process.pid };
    const sent = await takeStore(this.rt, me, {
      leaseMs: this.#deadAfterMs,
      waitMs,
      pollMs: this.#options.heartbeatMs,
    });
    this.#fence.renewed(sent);
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
   * Renews this worker's lease, then finishes the work of workers whose lease lapsed (see
   * `reap.ts`); with `othersDead`, of every other worker (a SQLite store at start).
   *
   * @throws a store error, after the rest of the reap, when one deferred a run (issue #20).
   */
  async reap(othersDead = false): Promise<ReapResult> {
    await this.heartbeat();
    const now = this.rt.clock.now();
    const gone = await this.rt.repos.workers.anyGone(now, this.#deadAfterMs, LOST_WORK_AFTER_STOP_MS);
    const scanLost = scansLostWork({ now, lastScanAt: this.#lastLostScan, othersDead, workerGone: gone });
    if (scanLost) this.#lastLostScan = now;
    const reaper = {
      workerId: this.id,
      deadAfterMs: this.#deadAfterMs,
      stopping: () => this.#stopping,
      scanLost,
    };
    return reap(this.rt, this.executor, reaper, othersDead);
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
        const base = this.#options.acquireAheadMs;
        await this.#clocks.check();
        const ticked = await this.tick(this.ticker.aheadMs(base));
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
        const wakeAt = await this.ticker.wakeAt(ticked, base);
        if (failures > 0) {
          log.warn({ failures, downMs: clock.now() - failingSince }, 'scheduler loop recovered');
          failures = 0;
        }
        const max = this.#options.maxSleepMs;
        const idle = () => (wakeAt === null ? 0 : wakeAt - clock.now());
        const wait = () => (wakeAt === null ? max : Math.min(Math.max(idle(), 0), max));
        // Idle time before the next occurrence prepares the ones after it (issue #24), a sleep's
        // worth per pass: by the time to that occurrence, not by the sleep, which is capped.
        if (idle() >= PREPARE_SLACK_MS)
          await this.ticker.prepare(
            PREPARE_HORIZON_MS,
            Math.min(idle() - PREPARE_SLACK_MS / 2, max),
            () => this.#changed || this.#stopping,
          );
        // Sleeps are timers (monotonic) capped at maxSleepMs; every wake decides anew by the clock,
        // so a wall clock that jumps either way is noticed within one cap (issue #12).
        await this.#sleep(wait());
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
}
