import type { Runtime } from './context.js';
import { runController } from './final-stop.js';

/**
 * The processes of runs this worker runs now, by process id (two attempts of one run are two
 * processes: the stale one is stopped alone), each with the controller that stops it; and the
 * stop requests (spec §5 `processStop`) applied to them.
 */
export class LocalProcesses {
  readonly #running = new Map<string, AbortController>();

  constructor(
    private readonly rt: Runtime,
    /** The drain's final stop: a process registered after it is stopped before it starts. */
    private readonly finalStop: AbortSignal,
  ) {}

  /** How many processes run here now. */
  get size(): number {
    return this.#running.size;
  }

  /** Registers a process as running here; its controller stops it. */
  register(processId: string): AbortController {
    const controller = runController(this.finalStop);
    this.#running.set(processId, controller);
    this.rt.metrics?.processes.set(this.#running.size);
    return controller;
  }

  /** Forgets a process whose engine returned (or was never entered). */
  returned(processId: string): void {
    this.#running.delete(processId);
    this.rt.metrics?.processes.set(this.#running.size);
  }

  /** Whether the process runs here. */
  has(processId: string): boolean {
    return this.#running.has(processId);
  }

  /**
   * Stops a process running here (spec §5 `processStop`); false when it does not run here.
   * Stopping one that already ended is not an error.
   */
  stop(processId: string, reason: string): boolean {
    const controller = this.#running.get(processId);
    controller?.abort(reason);
    return controller !== undefined;
  }

  /** Stops every process running here with `reason`. */
  stopAll(reason: string): void {
    for (const controller of this.#running.values()) controller.abort(reason);
  }

  /** Stops the local processes for which a stop was requested on any worker (`processes.stop_requested_at`). */
  async applyStopRequests(): Promise<number> {
    if (this.#running.size === 0) return 0;
    const requested = await this.rt.repos.processes.stopRequested([...this.#running.keys()]);
    for (const p of requested) this.stop(p.id, p.stopReason ?? 'stopped');
    return requested.length;
  }
}
