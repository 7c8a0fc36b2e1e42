import type { Logger } from '../log.js';
import { bootTimeMs } from './boot-clock.js';
import type { EngineCalls } from './engine-calls.js';
import { fenceAfterMs } from './lease.js';
import type { LeaseGate } from './lease-gate.js';
import { LeaseWatchdog } from './watchdog.js';

/** Options of a {@link SelfFence}. Durations are milliseconds. */
export interface SelfFenceOptions {
  /** The worker's lease: the others take its runs over once its heartbeat is older (plus a margin). */
  readonly leaseTtlMs: number;
  /** SIGTERM → SIGKILL of each process group when the worker fences itself. */
  readonly graceMs: number;
  readonly workerId: string;
  readonly log: Logger;
  /** The host's boot-time clock, suspend included (ms); {@link bootTimeMs} unless a test steps one. */
  readonly bootClock?: () => number | undefined;
  /**
   * Stops every run and workflow step of the worker (the executor's `stopAll`), what the main
   * thread does when it fences: each process group gets SIGKILL `graceMs` (this fence's grace, in
   * milliseconds) after the stop, so that the main thread alone ends them before the lease expires.
   */
  readonly stopRuns: (graceMs: number) => void;
}

const NS_PER_MS = 1_000_000n;

/**
 * A worker's self-fence (decisions §5 fencing): a worker that cannot renew its lease ends its runs
 * before the lease expires, so that no process of it outlives its claim once another worker takes
 * its runs over. The deadline is {@link fenceAfterMs} after the last renewal that succeeded,
 * counted from the instant it was sent (which the stored heartbeat stands for), on the monotonic
 * clock. At the deadline two things act:
 *
 * - the main thread, when its loop runs (the store is unreachable): it closes the executor's
 *   {@link LeaseGate} (no run is claimed or started, no engine of a run or a workflow step is
 *   entered) and stops every run and step, so `http` requests are aborted and process groups get
 *   SIGTERM, then SIGKILL after the grace (reason `lease-lost`), until a renewal succeeds;
 * - the {@link LeaseWatchdog} thread, also when the loop is blocked: it ends every process group
 *   itself, and ends the worker process when engine calls that own no process group (which only
 *   the main thread could abort) are still in flight.
 *
 * Nothing acts before {@link arm} (the worker's renewal timer starts): a worker driven by hand
 * renews its lease when it is told to.
 */
export class SelfFence {
  readonly #watchdog: LeaseWatchdog;
  readonly #afterNs: bigint;
  #renewedAt: bigint | undefined;
  // The boot-time clock (ms) when the last renewal that succeeded was sent.
  #renewedBootMs: number | undefined;
  #armed = false;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @throws UrsaError `ARGUMENT_INVALID` when the lease leaves no time before the fence (see
   *   {@link fenceAfterMs}).
   */
  constructor(
    private readonly gate: LeaseGate,
    /** The worker's engine calls in flight, with their process groups (the executor's `calls`). */
    private readonly calls: EngineCalls,
    private readonly options: SelfFenceOptions,
  ) {
    const afterMs = fenceAfterMs(options.leaseTtlMs, options.graceMs);
    this.#afterNs = BigInt(Math.round(afterMs)) * NS_PER_MS;
    this.#watchdog = new LeaseWatchdog(calls.groups, {
      fenceAfterMs: afterMs,
      graceMs: options.graceMs,
      workerId: options.workerId,
      log: options.log,
    });
  }

  /** The monotonic instant (ns) to take right before a renewal is sent, for {@link renewed}. */
  static now(): bigint {
    return process.hrtime.bigint();
  }

  /** Whether the watchdog thread has fenced the worker and no renewal followed (for tests and logs). */
  get watchdogFenced(): boolean {
    return this.#watchdog.fenced;
  }

  /** The host's boot-time clock now (ms, suspend included), or undefined where it has none. */
  bootTime(): number | undefined {
    return (this.options.bootClock ?? bootTimeMs)();
  }

  /**
   * Fences the worker now (as at its deadline) when more than `ms` passed on the boot-time clock
   * between the last renewal that succeeded and `sentBootMs` (a renewal about to be sent): the
   * others may have taken its runs over meanwhile, although the monotonic deadlines never passed
   * because the host was suspended. Does nothing where the host has no boot-time clock, when the
   * worker is fenced already, and before {@link arm}: a worker driven by hand renews its lease
   * when it is told to.
   *
   * @returns whether it fenced now.
   */
  fenceIfLapsed(sentBootMs: number | undefined, ms: number): boolean {
    if (!this.#armed || sentBootMs === undefined || this.#renewedBootMs === undefined) return false;
    // Fenced already by its monotonic deadline (the store unreachable, the host awake): nothing new.
    if (this.gate.fenced) return false;
    if (sentBootMs - this.#renewedBootMs <= ms) return false;
    this.#fence();
    return true;
  }

  /**
   * A renewal (or the registration) that was sent at `sentAt` ({@link now}; `sentBootMs` on the
   * boot-time clock) succeeded: the lease holds until `sentAt` + the fence delay. A fenced worker
   * holds it again, unless that instant has passed already (a renewal that took longer than
   * that), which fences it.
   */
  renewed(sentAt: bigint, sentBootMs: number | undefined = this.bootTime()): void {
    if (this.#renewedAt !== undefined && sentAt <= this.#renewedAt) return;
    this.#renewedAt = sentAt;
    this.#renewedBootMs = sentBootMs;
    if (!this.#armed) return;
    this.#watchdog.renewed(sentAt);
    this.#hold();
  }

  /** Starts fencing: the watchdog thread and the main thread's deadline. Calling it again does nothing. */
  arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    this.#renewedAt ??= SelfFence.now();
    this.calls.onGroupless((count) => this.#watchdog.requests(count));
    this.#watchdog.start(this.#renewedAt);
    this.#hold();
  }

  /** Stops fencing (a worker's clean stop, after its runs ended): the thread ends, the gate stays as it is. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#armed = false;
    await this.#watchdog.stop();
  }

  #deadline(): bigint {
    return (this.#renewedAt as bigint) + this.#afterNs;
  }

  #hold(): void {
    clearTimeout(this.#timer);
    const deadline = this.#deadline();
    const left = deadline - SelfFence.now();
    if (left <= 0n) {
      this.#fence();
      return;
    }
    const wasFenced = this.gate.fenced;
    this.gate.holdUntil(deadline);
    this.#watchdog.mainFenced(false);
    if (wasFenced)
      this.options.log.warn(
        { worker: this.options.workerId },
        'this worker renewed its lease again; it claims runs again',
      );
    this.#timer = setTimeout(() => this.#check(), Number(left / NS_PER_MS) + 1);
    this.#timer.unref();
  }

  #check(): void {
    const left = this.#deadline() - SelfFence.now();
    if (left <= 0n) {
      this.#fence();
      return;
    }
    this.#timer = setTimeout(() => this.#check(), Number(left / NS_PER_MS) + 1);
    this.#timer.unref();
  }

  #fence(): void {
    if (this.gate.fenced) return;
    this.gate.fence();
    this.#watchdog.mainFenced(true);
    this.options.log.error(
      {
        worker: this.options.workerId,
        sinceRenewalMs: Number((SelfFence.now() - (this.#renewedAt as bigint)) / NS_PER_MS),
        calls: this.calls.size,
      },
      'this worker could not renew its lease in time: it stopped its runs, and claims nothing until the store answers again',
    );
    this.options.stopRuns(this.options.graceMs);
  }
}
