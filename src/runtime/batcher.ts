/**
 * Groups the items added in one turn of the event loop into one call of `flush` (a write-behind
 * batch: one transaction for every run that ended in that turn, issue #4). Each `add` resolves
 * with its own item's result, or rejects with the batch's error. At most `max` items go into one
 * flush; more start another at once.
 */
export class Batcher<T, R> {
  #pending: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;

  constructor(
    private readonly flush: (items: readonly T[]) => Promise<readonly R[]>,
    private readonly max = 500,
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      if (this.#pending.length >= this.max) this.#drain();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#drain());
      }
    });
  }

  #drain(): void {
    this.#scheduled = false;
    const batch = this.#pending.splice(0);
    if (batch.length === 0) return;
    this.flush(batch.map((b) => b.item)).then(
      (results) => {
        for (const [i, b] of batch.entries()) b.resolve(results[i] as R);
      },
      (error: unknown) => {
        for (const b of batch) b.reject(error);
      },
    );
  }
}
