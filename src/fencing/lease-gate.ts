/**
 * Whether this worker holds its lease now, as the executor asks right before it starts anything
 * (a run's start, an engine's entry), and how many engine calls it has in flight (decisions §5
 * fencing). A gate nobody watches (a worker without its renewal timer: tests that drive the loop
 * themselves, short commands) always holds. The self-fence sets the deadline at each renewal and
 * closes the gate when it passed; instants are monotonic (`process.hrtime.bigint()`, ns).
 */
export class LeaseGate {
  #until: bigint | undefined;
  #fenced = false;
  #running = 0;
  #onRunning: ((count: number) => void) | undefined;

  /** True while the lease holds: not fenced, and the deadline of the last renewal not yet reached. */
  get held(): boolean {
    if (this.#fenced) return false;
    return this.#until === undefined || process.hrtime.bigint() < this.#until;
  }

  /** Whether the worker fenced itself and has not renewed its lease since. */
  get fenced(): boolean {
    return this.#fenced;
  }

  /** The engine calls in flight now (registered runs whose engine has not returned). */
  get running(): number {
    return this.#running;
  }

  /** Holds the lease until `deadline` (monotonic ns) and opens a fenced gate again. */
  holdUntil(deadline: bigint): void {
    this.#until = deadline;
    this.#fenced = false;
  }

  /** Closes the gate until the next {@link holdUntil}. */
  fence(): void {
    this.#fenced = true;
  }

  /** The executor reports its engine calls in flight; the listener (the watchdog) hears each count. */
  setRunning(count: number): void {
    this.#running = count;
    this.#onRunning?.(count);
  }

  /** Calls `listener` with the count of engine calls in flight, now and on every change. */
  onRunning(listener: (count: number) => void): void {
    this.#onRunning = listener;
    listener(this.#running);
  }
}
