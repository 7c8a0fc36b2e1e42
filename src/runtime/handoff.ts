import type { Runtime } from './context.js';
import type { RunRecorder } from './recorder.js';

/** How many queued runs a stopping worker releases: one waits per scheduler, so one per lane it held. */
const RELEASE_LIMIT = 10_000;

/**
 * What a clean stop does with the queued runs this worker holds (issue #20): a run waiting behind
 * an active one (stopped by the shutdown, or running on another worker) cannot start here any
 * more. Each is released — it stays queued, held by no worker — and says so, in its run log and
 * the server log; the next worker to look starts it when its lane is free, as routine work, not
 * the work of a lost worker. A store that fails here leaves them held: the next worker takes them
 * over as a lost worker's. Never throws.
 *
 * @returns how many runs were released.
 */
export async function releaseQueued(rt: Runtime, recorder: RunRecorder, workerId: string): Promise<number> {
  const { repos, clock, log } = rt;
  let released = 0;
  try {
    for (const run of await repos.runs.heldBy(workerId, ['queued'], RELEASE_LIMIT)) {
      // A compare-and-swap: a run another worker took meanwhile stays its.
      if (!(await repos.runs.transition(run.correlationId, 'queued', { worker_id: null }, workerId)))
        continue;
      released++;
      const at = clock.now();
      await recorder.writeRunLog({ ...run, workerId: null }, undefined, undefined, undefined, {
        at,
        text: 'the worker stopped; this run stays queued, and the next worker starts it when its lane is free',
      });
      log.info(
        { scheduler: run.name, correlationId: run.correlationId },
        'worker stopping: a queued run stays queued for the next worker',
      );
    }
  } catch (error) {
    log.warn(
      { err: error, released },
      'could not release the queued runs of this worker; the next worker takes them over',
    );
  }
  return released;
}
