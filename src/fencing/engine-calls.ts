import type { RunningGroups } from './running-groups.js';

/**
 * The engine calls this worker has in flight (decisions §5 fencing): one per process whose engine
 * was entered — a scheduler run's or a workflow step's alike — from its entry until its engine
 * returned. A call either owns process groups (its engine reported them through `spawned`) or
 * owns none: then it is work inside this process (an `http` request, an engine a library user
 * registered) that only the main thread can abort, which the lease watchdog must know of to end
 * the worker process when that thread is stuck. The groups go to {@link RunningGroups}, which the
 * store's group records and the watchdog follow.
 *
 * A process registered to run but not entered yet (a batch waiting for its instant, a start
 * awaiting the store) is no call: it has nothing running to stop.
 */
export class EngineCalls {
  // Process id → how many process groups its engine has reported.
  readonly #calls = new Map<string, number>();
  #groupless = 0;
  #listener: ((groupless: number) => void) | undefined;

  constructor(
    /** Where the groups of the calls are tracked (a worker's `executor.groups`). */
    readonly groups: RunningGroups,
  ) {}

  /**
   * The engine of `processId` is entered now: call it in the same turn as the entry. Entering a
   * process already in flight changes nothing.
   */
  enter(processId: string): void {
    if (this.#calls.has(processId)) return;
    this.#calls.set(processId, 0);
    this.#count(1);
  }

  /**
   * The engine of `processId` started the process group `pgid` (its `EngineRequest.spawned`): the
   * group is tracked until the engine returns. A group reported for a process not in flight is
   * tracked all the same (a group is never left untracked).
   */
  spawned(processId: string, pgid: number): void {
    this.groups.add({ processId, pgid });
    const owned = this.#calls.get(processId);
    if (owned === undefined) return;
    this.#calls.set(processId, owned + 1);
    if (owned === 0) this.#count(-1);
  }

  /** The engine of `processId` returned (or was never entered): the call and its groups are forgotten. */
  returned(processId: string): void {
    this.groups.remove(processId);
    const owned = this.#calls.get(processId);
    if (owned === undefined) return;
    this.#calls.delete(processId);
    if (owned === 0) this.#count(-1);
  }

  /** Whether the engine of `processId` is in flight here. */
  has(processId: string): boolean {
    return this.#calls.has(processId);
  }

  /** How many calls are in flight. */
  get size(): number {
    return this.#calls.size;
  }

  /** How many calls in flight own no process group: only the main thread can stop them. */
  get groupless(): number {
    return this.#groupless;
  }

  /** Calls `listener` with {@link groupless}, now and on every change (the watchdog's shared count). */
  onGroupless(listener: (groupless: number) => void): void {
    this.#listener = listener;
    listener(this.#groupless);
  }

  #count(change: number): void {
    this.#groupless += change;
    this.#listener?.(this.#groupless);
  }
}
