/**
 * Groups added items into calls of `flush` (a write-behind batch: one transaction for many runs
 * that ended, issue #4). Each `add` resolves with its own item's result, or rejects with the
 * batch's error. At most `max` items go into one flush, and at most `inFlight` flushes run at
 * once: items added meanwhile wait for the next, so that a batch grows with the load instead of
 * the statements multiplying (group commit, issue #24). Under light load a flush starts on the
 * next turn of the event loop, as soon as one is free.
 */
export class Batcher<T, R> {
  #pending: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;
  #running = 0;

  constructor(
    private readonly flush: (items: readonly T[]) => Promise<readonly R[]>,
    private readonly max = 500,
    private readonly inFlight = 2,
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  // The next flushes go on a later turn of the event loop, never straight after the last: on
  // SQLite, whose statements hold the loop, flushes back to back would keep timers (the lease's
  // renewal) waiting for as long as items keep coming.
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#running < this.inFlight && this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.max);
      this.#running++;
      this.flush(batch.map((b) => b.item))
        .then(
          (results) => {
            for (const [i, b] of batch.entries()) b.resolve(results[i] as R);
          },
          (error: unknown) => {
            for (const b of batch) b.reject(error);
          },
        )
        .finally(() => {
          this.#running--;
          if (this.#pending.length > 0) this.#schedule();
        });
    }
  }
}
