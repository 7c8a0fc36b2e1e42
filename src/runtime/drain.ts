import { setMaxListeners } from 'node:events';
import { sleep } from '../time/sleep.js';
import type { Runtime } from './context.js';

/**
 * The longest timer of a wait for an instant, milliseconds: timers are monotonic, the instant is
 * the wall clock's, so a wait re-reads the clock at least this often and a clock set back (or
 * forward) is followed within it, not a timer's full length later (issue #12).
 */
export const MAX_WAIT_MS = 1000;

/** What a {@link Drain} stops once its grace period ended. */
export interface DrainTargets {
  /** Resolves when everything dispatched so far has been recorded. */
  settled(): Promise<void>;
  /** Stops every process still running (reason `shutdown`) and the workflow runs. */
  stopRunning(): Promise<void>;
}

/**
 * The executor's lifetime (decisions §5 graceful stop): the waits of runs claimed ahead of their
 * instant, and the drain that ends it in two steps — `draining` (no new starts, no promotions,
 * backoff sleeps end) and `stopped` (the grace period ended: runs claimed ahead and still waiting
 * stay claimed for the next worker, running processes are stopped).
 */
export class Drain {
  readonly #draining = new AbortController();
  readonly #stopped = new AbortController();
  // The waits of runs claimed ahead of their instant (see until).
  readonly #held = new Set<Promise<boolean>>();

  constructor(private readonly clock: Runtime['clock']) {
    // Every run waiting for its instant or a retry listens on these: hundreds at once are normal.
    setMaxListeners(0, this.#draining.signal, this.#stopped.signal);
  }

  /** Aborted when a drain begins: no new starts, no promotions, and backoff sleeps end. */
  get draining(): AbortSignal {
    return this.#draining.signal;
  }

  /** Aborted when a drain's grace period ends: what still waits stays claimed, what runs is stopped. */
  get stopped(): AbortSignal {
    return this.#stopped.signal;
  }

  /** How many runs wait for their instant now ({@link until}): read by tests and status. */
  get waiting(): number {
    return this.#held.size;
  }

  /**
   * Resolves true once the clock reaches `instant` (UTC ms), checking the clock again after each
   * timer (a timer may fire early); false when a drain's grace period ends first. A drain waits
   * for these: an occurrence claimed ahead is started at its instant, as if claimed then.
   */
  until(instant: number): Promise<boolean> {
    if (instant <= this.clock.now()) return Promise.resolve(true);
    const wait = (async () => {
      for (;;) {
        if (this.#stopped.signal.aborted) return false;
        const ms = instant - this.clock.now();
        if (ms <= 0) return true;
        await sleep(Math.min(ms, MAX_WAIT_MS), this.#stopped.signal);
      }
    })();
    this.#held.add(wait);
    return wait.finally(() => this.#held.delete(wait));
  }

  /**
   * Waits up to `graceMs` for runs claimed ahead to reach their instant and start, and for
   * running processes to end; then stops the rest and waits for them.
   */
  async drain(graceMs: number, targets: DrainTargets): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    // Runs claimed ahead start at their instant (at most the fire-ahead window away).
    await Promise.race([Promise.all([...this.#held]), grace]);
    this.#draining.abort();
    await Promise.race([targets.settled(), grace]);
    clearTimeout(timer);
    this.#stopped.abort();
    await targets.stopRunning();
    await targets.settled();
  }
}
