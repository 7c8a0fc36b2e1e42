import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from '../log.js';
import type { RunningGroups } from './running-groups.js';
import {
  WATCHDOG_LAYOUT,
  type WatchdogData,
  type WatchdogMessage,
  watchdogSource,
} from './watchdog-thread.js';

/** Options of a {@link LeaseWatchdog}. Durations are milliseconds. */
export interface LeaseWatchdogOptions {
  /**
   * How long after the last renewal sent the worker is fenced (see `fenceAfterMs`); the thread
   * acts {@link WATCHDOG_LAG_MS} later.
   */
  readonly fenceAfterMs: number;
  /** SIGTERM → SIGKILL of each process group. */
  readonly graceMs: number;
  /** The worker's id, on the watchdog's log lines. */
  readonly workerId: string;
  /** The worker's log: its level decides which of the watchdog's lines are written. */
  readonly log: Logger;
}

/** How often a fenced watchdog looks for a renewal that lifts its fence, milliseconds. */
const FENCED_POLL_MS = 50;

/**
 * How long after the main thread's deadline the watchdog acts, milliseconds (within the fence's
 * slack): a main thread whose loop runs stops its runs first, so they are recorded as stopped
 * (`lease-lost`), not as killed by a signal from nowhere.
 */
export const WATCHDOG_LAG_MS = 50;

/**
 * The main thread's side of the lease watchdog (decisions §5 fencing; the thread is
 * {@link watchdogThread}): it publishes each successful renewal and the count of engine calls in
 * flight that own no process group in shared memory, and posts every change of `groups` to the
 * thread. The thread is
 * unref'd (it never keeps the process alive) and ended by {@link stop}.
 */
export class LeaseWatchdog {
  readonly #buffer = new SharedArrayBuffer(WATCHDOG_LAYOUT.bytes);
  readonly #renewed = new BigInt64Array(this.#buffer, WATCHDOG_LAYOUT.renewedBytes, 1);
  readonly #slots = new Int32Array(this.#buffer, WATCHDOG_LAYOUT.slotsBytes, WATCHDOG_LAYOUT.slots);
  #thread: Thread | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly groups: RunningGroups,
    private readonly options: LeaseWatchdogOptions,
  ) {}

  /**
   * Starts the thread, counting from the renewal sent at `renewedAt` (monotonic ns); the groups
   * running now are posted first. Calling it again does nothing.
   */
  start(renewedAt: bigint): void {
    if (this.#thread !== undefined) return;
    this.renewed(renewedAt);
    const { fenceAfterMs, graceMs, workerId, log } = this.options;
    const workerData: WatchdogData = {
      buffer: this.#buffer,
      layout: WATCHDOG_LAYOUT,
      fenceAfterNs: BigInt(Math.round((fenceAfterMs + WATCHDOG_LAG_MS) * 1e6)),
      graceMs,
      pollMs: FENCED_POLL_MS,
      workerId,
      logLevel: log.levelVal,
    };
    const thread = new Thread(watchdogSource(), { eval: true, workerData });
    thread.unref();
    thread.on('error', (error) =>
      log.error({ err: error }, 'the lease watchdog stopped: running processes are not fenced'),
    );
    this.#thread = thread;
    for (const { pgid } of this.groups.list()) this.#post({ kind: 'added', pgid });
    this.#unsubscribe = this.groups.subscribe((change) =>
      this.#post({ kind: change.kind, pgid: change.group.pgid }),
    );
  }

  /** Publishes a renewal that succeeded, sent at `sentAt` (monotonic ns); an older one changes nothing. */
  renewed(sentAt: bigint): void {
    for (;;) {
      const current = Atomics.load(this.#renewed, 0);
      if (current >= sentAt) return;
      if (Atomics.compareExchange(this.#renewed, 0, current, sentAt) === current) return;
    }
  }

  /**
   * Publishes how many engine calls in flight own no process group (see `EngineCalls.groupless`):
   * what only the main thread can abort.
   */
  requests(count: number): void {
    Atomics.store(this.#slots, WATCHDOG_LAYOUT.requests, count);
  }

  /** Tells the thread whether the main thread has fenced itself (it aborted every run then). */
  mainFenced(fenced: boolean): void {
    Atomics.store(this.#slots, WATCHDOG_LAYOUT.mainFenced, fenced ? 1 : 0);
  }

  /** Whether the thread has fenced the worker and no renewal followed. */
  get fenced(): boolean {
    return Atomics.load(this.#slots, WATCHDOG_LAYOUT.threadFenced) === 1;
  }

  /** Ends the thread; the watchdog fences nothing from then on. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    const thread = this.#thread;
    this.#thread = undefined;
    await thread?.terminate();
  }

  #post(message: WatchdogMessage): void {
    this.#thread?.postMessage(message);
  }
}
