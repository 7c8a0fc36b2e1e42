/**
 * Whether this worker holds its lease now, as the executor and the workflow runner ask right
 * before they start anything (a run's start, an engine's entry: a scheduler run's or a workflow
 * step's), decisions §5 fencing. A gate nobody watches (a worker without its renewal timer: tests
 * that drive the loop themselves, short commands) always holds. The self-fence sets the deadline at each renewal and
 * closes the gate when it passed; instants are monotonic (`process.hrtime.bigint()`, ns).
 */
export class LeaseGate {
  #until: bigint | undefined;
  #fenced = false;

  /** True while the lease holds: not fenced, and the deadline of the last renewal not yet reached. */
  get held(): boolean {
    if (this.#fenced) return false;
    return this.#until === undefined || process.hrtime.bigint() < this.#until;
  }

  /** Whether the worker fenced itself and has not renewed its lease since. */
  get fenced(): boolean {
    return this.#fenced;
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
}
