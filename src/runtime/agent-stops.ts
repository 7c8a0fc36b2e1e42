import { nextDeliveryAt } from '../decisions/delivery.js';
import type { Run } from '../runs/run.js';
import type { AgentRunStop } from '../store/agent-runs.js';
import { endAgentRun } from './agent-end.js';
import type { Runtime } from './context.js';
import { handOffContext, handOffEngine } from './hand-off.js';

/** How many stopping agent runs one pass looks at. */
const STOP_LIMIT = 100;

/**
 * Delivers the stops of agent runs (issue #25): first a run past its recipe's `timeout` (from its
 * hand-off) gets a stop request, reason `timeout after N ms`; then, for each handed-off run whose
 * process a stop was requested for (`cancelPrevious`, a stop request, its timeout), its engine's `stop` goes to the service,
 * retried with backoff ({@link nextDeliveryAt}) until the service takes it (idempotent on its side: a
 * repeat is harmless). The service confirms with its `complete` callback (the run ends `cancelled`
 * there); one that has not confirmed `shutdownGrace` after the request is ended `cancelled` here,
 * with the stop's reason and a warning in the log: never silently. Any worker may: each send is
 * recorded, and the end is a compare-and-swap. `promote` gives a freed lane to its waiting run.
 * Returns how many runs it ended.
 */
export async function stopAgentRuns(
  rt: Runtime,
  now: number,
  promote: (run: Run) => Promise<unknown>,
): Promise<number> {
  // A run past its recipe's timeout is asked to stop, as a stop request would (the http engine's reason).
  for (const overdue of await rt.repos.agentRuns.overdue(now, STOP_LIMIT))
    await rt.repos.processes.requestStop(overdue.processId, `timeout after ${overdue.timeoutMs} ms`, now);
  let ended = 0;
  for (const stopping of await rt.repos.agentRuns.stopping(STOP_LIMIT)) {
    const run = await rt.repos.runs.get(stopping.correlationId);
    if (run?.state !== 'started' || run.fencingToken !== stopping.fencingToken) continue;
    const reason = stopping.stopReason ?? 'stopped';
    if (now - stopping.stopRequestedAt >= rt.settings.shutdownGraceMs) {
      if (await endAgentRun(rt, run, { status: 'stopped', reason }, promote)) {
        ended++;
        rt.log.warn(
          { scheduler: run.name, correlationId: run.correlationId, stopTaken: stopping.stopSentAt !== null },
          'agent run ended cancelled: its service did not confirm the stop within the grace period',
        );
      }
      continue;
    }
    if (stopping.stopSentAt === null && (stopping.nextStopAt === null || now >= stopping.nextStopAt))
      await sendStop(rt, run, stopping, reason, now);
  }
  return ended;
}

/** Sends one stop to the service and records whether it took it. */
async function sendStop(rt: Runtime, run: Run, stopping: AgentRunStop, reason: string, now: number) {
  const loaded = await handOffEngine(rt, run);
  const context = handOffContext(run, stopping.fencingToken, stopping.attempt);
  const sent =
    loaded?.engine.stop === undefined || stopping.reference === null
      ? ({ taken: false, reason: 'its recipe or engine cannot be loaded' } as const)
      : await loaded.engine.stop({
          processId: stopping.processId,
          recipe: loaded.recipe,
          context,
          reference: stopping.reference,
          reason,
        });
  const tries = stopping.stopTries + 1;
  await rt.repos.agentRuns.stopSent(
    run.correlationId,
    stopping.fencingToken,
    now,
    sent.taken ? undefined : nextDeliveryAt(now, tries),
  );
  if (!sent.taken)
    rt.log.warn(
      { scheduler: run.name, correlationId: run.correlationId, tries, reason: sent.reason },
      'the agent service did not take the stop; retrying',
    );
}
