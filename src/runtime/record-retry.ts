import type { Logger } from '../log.js';
import { sleep } from '../time/sleep.js';

/** A backoff: `attempts` tries in all, the first retry after `baseMs`, doubling up to `maxMs`. */
export interface Backoff {
  readonly attempts: number;
  readonly baseMs: number;
  readonly maxMs: number;
}

/**
 * How a record of what already happened (a batch's starts, a run's end, a process group) is
 * retried while the store fails (issue #12): about 3 minutes, so that an outage of the store
 * loses no outcome.
 */
export const RECORD_RETRY: Backoff = { attempts: 40, baseMs: 100, maxMs: 5000 };

/** How {@link persistRecord} retries, and when it stops. */
export interface RecordRetry {
  readonly backoff: Backoff;
  /** Aborted: no more retries (the worker is stopping); the backoff's sleep ends at once too. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** An error not worth retrying (a simulated crash in tests): thrown at once. */
  readonly fatal?: (error: unknown) => boolean;
}

/**
 * Runs `write` until it succeeds, sleeping by `retry.backoff` between tries, and logging the 1st,
 * 2nd, 4th, 8th … failure at warn (an outage is a few lines, not one per try). `attempt` counts
 * from 0.
 *
 * @throws the last error once the tries are spent or `retry.signal` is aborted, or a fatal one.
 */
export async function persistRecord<T>(
  what: string,
  write: (attempt: number) => Promise<T>,
  retry: RecordRetry,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write(attempt);
    } catch (error) {
      const { attempts, baseMs, maxMs } = retry.backoff;
      if (retry.fatal?.(error) === true || retry.signal.aborted || attempt + 1 >= attempts) throw error;
      if ((attempt & (attempt + 1)) === 0)
        retry.log.warn({ err: error, attempt: attempt + 1 }, `could not write ${what}; retrying`);
      await sleep(Math.min(baseMs * 2 ** attempt, maxMs), retry.signal);
    }
  }
}
