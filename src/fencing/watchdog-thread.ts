import type * as fsModule from 'node:fs';
import type * as threadsModule from 'node:worker_threads';

/**
 * Where the lease watchdog's shared memory keeps what (see {@link WatchdogData.buffer}): a
 * BigInt64 at byte 0, then Int32 slots from byte 8.
 */
export const WATCHDOG_LAYOUT = {
  /** BigInt64 slot 0: the monotonic instant (ns) the last successful renewal was sent. */
  renewedBytes: 0,
  /** Where the Int32 slots begin, bytes. */
  slotsBytes: 8,
  /**
   * Int32 slot: engine calls in flight that own no process group (an `http` request), scheduler
   * runs' and workflow steps' alike: only the main thread can abort them (see `EngineCalls`).
   */
  requests: 0,
  /** Int32 slot: 1 while the main thread has fenced itself (it aborted every run). */
  mainFenced: 1,
  /** Int32 slot: 1 while the watchdog has fenced the worker and no renewal followed. */
  threadFenced: 2,
  /** How many Int32 slots there are. */
  slots: 3,
  /** Bytes of the whole buffer. */
  bytes: 8 + 3 * 4,
} as const;

/** What the main thread gives the watchdog thread (`workerData`). */
export interface WatchdogData {
  /** Shared with the main thread, laid out as {@link WATCHDOG_LAYOUT}. */
  readonly buffer: SharedArrayBuffer;
  readonly layout: typeof WATCHDOG_LAYOUT;
  /** How long after the last renewal sent the worker is fenced, ns. */
  readonly fenceAfterNs: bigint;
  /** SIGTERM → SIGKILL, milliseconds. */
  readonly graceMs: number;
  /** How often a fenced watchdog looks for a renewal, milliseconds. */
  readonly pollMs: number;
  readonly workerId: string;
  /** The worker's log level as pino numbers it (`Infinity`: silent); lines below it are not written. */
  readonly logLevel: number;
}

/**
 * What the main thread posts to the watchdog: a process group started, or the engine that started
 * it (a scheduler run's or a workflow step's) returned.
 */
export type WatchdogMessage =
  | { readonly kind: 'added'; readonly pgid: number }
  | { readonly kind: 'removed'; readonly pgid: number };

/**
 * The lease watchdog, run in a `node:worker_threads` thread of its own so that it acts while the
 * main event loop is blocked (decisions §5 fencing). It follows the process groups of the
 * worker's scheduler runs and workflow steps (messages from the main thread, delivered even while
 * that thread is stuck), the count of their engine calls that own no process group, and the last
 * renewal (both in shared memory). When no renewal succeeded for `fenceAfterNs`, it sends SIGTERM
 * to every group, SIGKILL after `graceMs` to those still tracked, sets the "fenced" slot and logs
 * an error line (pino's JSON, on standard output as the worker's log). If then calls without a
 * process group (`http` requests) are still in flight and the main thread has not fenced itself
 * (its loop is blocked, so only it could have aborted them), the watchdog ends the worker process
 * with SIGKILL: its sockets close with it. A renewal that succeeds later lifts the fence.
 *
 * A group is signalled only while it is tracked, that is until the engine that started it
 * returned; Linux gives out no pid that is still some process's group id (SECURITY.md "Fencing").
 *
 * The function is the thread's whole program: it is started from its source text (`eval`), so it
 * uses nothing outside itself but its two arguments.
 */
export function watchdogThread(threads: typeof threadsModule, fs: typeof fsModule): void {
  const data = threads.workerData as WatchdogData;
  const { layout } = data;
  const renewed = new BigInt64Array(data.buffer, layout.renewedBytes, 1);
  const slots = new Int32Array(data.buffer, layout.slotsBytes, layout.slots);
  const groups = new Set<number>();
  let fencedFor: bigint | undefined;

  const log = (level: number, fields: Record<string, unknown>, msg: string): void => {
    if (level < data.logLevel) return;
    const time = new Date().toISOString();
    const line = JSON.stringify({ level, time, service: 'ursa', worker: data.workerId, ...fields, msg });
    try {
      fs.writeSync(1, `${line}\n`);
    } catch {
      // A closed standard output must not stop the fence.
    }
  };
  const signal = (pgid: number, sig: 'SIGTERM' | 'SIGKILL'): void => {
    try {
      process.kill(-pgid, sig);
    } catch {
      // ESRCH: the whole group has exited already.
    }
  };
  const end = (pgids: readonly number[]): void => {
    for (const pgid of pgids) signal(pgid, 'SIGTERM');
    setTimeout(() => {
      for (const pgid of pgids) if (groups.has(pgid)) signal(pgid, 'SIGKILL');
    }, data.graceMs);
  };

  const fence = (at: bigint, now: bigint): void => {
    fencedFor = at;
    Atomics.store(slots, layout.threadFenced, 1);
    const pgids = [...groups];
    end(pgids);
    log(
      50,
      { groups: pgids.length, sinceRenewalMs: Number((now - at) / 1_000_000n) },
      'this worker could not renew its lease in time: its running processes are being stopped (SIGTERM, then SIGKILL) before another worker may take its runs over',
    );
    setTimeout(() => {
      // Renewed meanwhile, or the main thread aborted its requests itself.
      if (Atomics.load(renewed, 0) !== at || Atomics.load(slots, layout.mainFenced) === 1) return;
      // Engine calls that own no process group: only the main thread can stop them.
      const requests = Atomics.load(slots, layout.requests);
      if (requests <= 0) return;
      log(
        60,
        { requests },
        'this worker is stuck and could not renew its lease, with requests in flight that only its own process can stop: the worker process ends itself now',
      );
      process.kill(process.pid, 'SIGKILL');
    }, data.graceMs);
  };

  const check = (): void => {
    const at = Atomics.load(renewed, 0);
    const now = process.hrtime.bigint();
    if (fencedFor !== undefined) {
      if (at <= fencedFor) {
        setTimeout(check, data.pollMs);
        return;
      }
      fencedFor = undefined;
      Atomics.store(slots, layout.threadFenced, 0);
    }
    const deadline = at + data.fenceAfterNs;
    if (now >= deadline) {
      fence(at, now);
      setTimeout(check, data.pollMs);
      return;
    }
    setTimeout(check, Number((deadline - now) / 1_000_000n) + 1);
  };

  threads.parentPort?.on('message', (message: WatchdogMessage) => {
    if (message.kind === 'removed') {
      groups.delete(message.pgid);
      return;
    }
    groups.add(message.pgid);
    // Started after the fence (it raced the gate): it does not outlive the lease either.
    if (fencedFor !== undefined) end([message.pgid]);
  });
  check();
}

/** The source text the watchdog thread is started from (`new Worker(source, { eval: true })`). */
export function watchdogSource(): string {
  return `(${watchdogThread.toString()})(require('node:worker_threads'), require('node:fs'));`;
}
