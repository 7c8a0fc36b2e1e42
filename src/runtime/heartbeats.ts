import { heartbeatVerdict } from '../decisions/heartbeat.js';
import { EndReason } from '../runs/outcomes.js';
import type { Runtime } from './context.js';
import type { Executor } from './executor.js';

/** How many agent runs one heartbeat check reads. */
const CHECK_LIMIT = 1000;

/**
 * Ends `failed`, reason `heartbeat-timeout`, every agent run whose service has been silent longer
 * than its recipe's `heartbeatTimeout` at `now` (issue #25; the verdict is `heartbeatVerdict`'s):
 * its process marked failed, its END line and final run log in one transaction, the inbox item
 * of its `runAs` user, and its lane to the run waiting behind it (`Executor.endFailed`). Any
 * worker may: the end is a compare-and-swap, so each run ends once. Returns how many it ended.
 */
export async function endSilentAgentRuns(rt: Runtime, executor: Executor, now: number): Promise<number> {
  let ended = 0;
  // Read soonest deadline first: the first run still alive ends the check.
  for (const agentRun of await rt.repos.agentRuns.active(CHECK_LIMIT)) {
    const verdict = heartbeatVerdict(agentRun, now);
    if (verdict.kind === 'alive') break;
    const run = await rt.repos.runs.get(agentRun.correlationId);
    if (run?.state !== 'started' || run.fencingToken !== agentRun.fencingToken) continue;
    // A scheduler with retries left tries the run again, as after any failed attempt (issue #22).
    if (await executor.retryHandedOff(run, EndReason.HEARTBEAT_TIMEOUT)) continue;
    const done = await executor.endFailed(run, {
      reason: EndReason.HEARTBEAT_TIMEOUT,
      from: 'started',
      at: now,
      details: {
        processId: run.processId,
        reason: EndReason.HEARTBEAT_TIMEOUT,
        silentForMs: verdict.silentForMs,
        heartbeatTimeoutMs: agentRun.heartbeatTimeoutMs,
      },
    });
    if (!done) continue;
    ended++;
    rt.log.warn(
      { scheduler: run.name, correlationId: run.correlationId, silentForMs: verdict.silentForMs },
      'agent run ended: its service stayed silent too long',
    );
  }
  return ended;
}
