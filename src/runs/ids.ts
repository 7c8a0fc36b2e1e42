import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/*
 * The ids of runs and processes: a prefix and a UUIDv7 (RFC 9562), whose text sorts by the
 * millisecond it was made in. The store's indexes on them (the primary keys of runs and
 * processes, the runs' process index) then take new ids at their end instead of at random pages:
 * fewer pages written, and fewer full-page images in PostgreSQL's write-ahead log, for each run
 * (issue #24).
 *
 * Every bit after the millisecond is drawn afresh for each id (the options object: without it the
 * library counts up from one id to the next within a millisecond, and two ids of one tenant would
 * tell how many ids the worker made in between for others). An id tells when it was made, which
 * its run's own records say anyway, and nothing of any other id.
 */
const FRESH = { rng: pooledRandom } as const;

// Random bytes drawn 4 KiB at a time: one call into the system's generator per 256 ids instead of
// one per id (a fiftieth of a worker's CPU at a top of the hour, issue #24). Each id gets 16
// bytes no other id got.
const POOL = new Uint8Array(4096);
let used = POOL.length;
function pooledRandom(): Uint8Array {
  if (used === POOL.length) {
    randomFillSync(POOL);
    used = 0;
  }
  used += 16;
  return POOL.subarray(used - 16, used);
}

/** A new run's correlation id, `run_<uuidv7>`. */
export function newCorrelationId(): string {
  return `run_${v7(FRESH)}`;
}

/** A new process's id, `proc_<uuidv7>`. */
export function newProcessId(): string {
  return `proc_${v7(FRESH)}`;
}
