import pLimit from 'p-limit';

/** How many batch start transactions a worker runs at once: one in the store, one being prepared. */
export const BATCH_STARTS_IN_FLIGHT = 2;

/**
 * A worker's batch starts (issue #24), at most {@link BATCH_STARTS_IN_FLIGHT} at once: a top of
 * the hour claimed ahead is dozens of batches due at one instant, and each start holds a
 * PostgreSQL lock per scheduler until it commits (the server's lock table is shared and small).
 * While starts wait for their turn, the ends of runs give way ({@link StartQueue.clear}): a run
 * is late until it has started, while its end, once its engine returned, only waits to be written.
 */
export class StartQueue {
  readonly #limit = pLimit(BATCH_STARTS_IN_FLIGHT);
  #waiters: (() => void)[] = [];

  /** Runs `start` (a batch's start transaction) in its turn; resolves or rejects as it does. */
  run<T>(start: () => Promise<T>): Promise<T> {
    return this.#limit(() => {
      // Its turn came: when it was the last waiting, what gave way goes on.
      if (this.#limit.pendingCount === 0) this.#wake();
      return start();
    });
  }

  /** Resolves once no start waits for its turn (at once when none does). */
  async clear(): Promise<void> {
    while (this.#limit.pendingCount > 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
