import type { Run } from '../store/runs.js';

/**
 * Fault points for tests: code run at a precise step of a run, e.g. to crash a worker there
 * (issue #4: between claim and spawn; issue #6: after a one-shot's spawn and after its marker).
 * A fault that throws ends the step there, as a crash would.
 */
export interface RunFaults {
  /** At the start of every dispatch attempt of a run (a failing spawn is retried with backoff). */
  readonly beforeSpawn?: (run: Run) => void | Promise<void>;
  /** Right after a claim committed, before the run is dispatched. */
  readonly afterClaim?: (run: Run) => void | Promise<void>;
  /** A one-shot: right after its process was created and its START line written, before its fired marker. */
  readonly afterSpawn?: (run: Run) => void | Promise<void>;
  /** A one-shot: right after its fired marker, before its document goes to the trash. */
  readonly afterMarker?: (run: Run) => void | Promise<void>;
  /** Right after a run's engine returned, before its end is written. */
  readonly beforeEnd?: (run: Run) => void | Promise<void>;
  /**
   * Right after a run's engine was entered (a `shell` run's process group is running), in the
   * same turn of the event loop and not awaited: a fault that busy-waits here ({@link busyWait})
   * blocks the worker's event loop while the run's process runs (issue #20 self-fencing).
   */
  readonly afterStart?: (run: Run) => void;
}

/**
 * Blocks the calling thread for `ms` milliseconds (monotonic), doing nothing else: a stalled event
 * loop, for fault points. Timers, I/O and the lease renewal of that thread wait meanwhile.
 */
export function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Spinning on purpose.
  }
}

/**
 * What a fault throws to stand for a crash: the work stops where it is, as if the process died
 * (nothing retries or records it). Any other error is an ordinary failure.
 */
export class SimulatedCrash extends Error {}
