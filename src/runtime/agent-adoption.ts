import { heartbeatVerdict } from '../decisions/heartbeat.js';
import type { Run } from '../store/runs.js';
import type { Runtime } from './context.js';
import { feedLineOf } from './recorder.js';

/**
 * Adopts the agent runs among `lost` (started runs whose worker is not live) for worker
 * `workerId` (decisions §5, issue #25): a run handed to its service has no child process to end,
 * so instead of ending it `worker-lost` this worker takes it over with the next attempt and a new
 * fencing token, as long as its service has not been silent past its `heartbeatTimeout` at `now`
 * (`heartbeatVerdict`; a silent one is left to the heartbeat check). The service keeps its run and
 * credential, learns the new attempt from the answer to its next callback, and from then on a
 * stop or answer the lost worker might still send carries a token below the service's latest.
 * An `AGENT` feed line puts the adoption in the run log's timeline.
 *
 * @returns the correlation ids of the handed-off runs among `lost`, adopted here or not: no
 *   caller ends them as lost.
 */
export async function adoptAgentRuns(
  rt: Runtime,
  workerId: string,
  lost: readonly Run[],
  now: number,
): Promise<Set<string>> {
  const handedOff = await rt.repos.agentRuns.handedOff(lost.map((run) => run.correlationId));
  for (const run of lost) {
    if (!handedOff.has(run.correlationId) || run.fencingToken === null) continue;
    const agentRun = await rt.repos.agentRuns.getWithHash(run.correlationId);
    if (agentRun === undefined || heartbeatVerdict(agentRun, now).kind === 'timeout') continue;
    const adopted = await rt.repos.agentRuns.adopt({
      key: run,
      correlationId: run.correlationId,
      fromWorker: run.workerId,
      fencingToken: run.fencingToken,
      workerId,
    });
    if (adopted === undefined) continue;
    await rt.repos.feed.append(
      feedLineOf(run, 'AGENT', now, 'pending', {
        processId: run.processId,
        callback: 'adopted',
        workerId,
        fromWorker: run.workerId,
        attempt: adopted.attempt,
        fencingToken: adopted.fencingToken,
      }),
    );
    rt.log.info(
      { scheduler: run.name, correlationId: run.correlationId, fromWorker: run.workerId, ...adopted },
      'adopted an agent run of a lost worker',
    );
  }
  return handedOff;
}
