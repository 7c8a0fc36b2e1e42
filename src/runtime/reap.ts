import { endLeftoverGroups } from '../fencing/leftovers.js';
import { EndReason } from '../runs/outcomes.js';
import { type Liveness, leaseLiveness } from '../store/liveness.js';
import { ACTIVE_STATUSES } from '../store/processes.js';
import type { Run } from '../store/runs.js';
import { adoptAgentRuns } from './agent-adoption.js';
import { deliverAnswers } from './agent-answers.js';
import { stopAgentRuns } from './agent-stops.js';
import type { Runtime } from './context.js';
import type { Executor } from './executor.js';
import { endSilentAgentRuns } from './heartbeats.js';
import { missingStartLine } from './lost-start.js';
import { releaseUnentered } from './one-shot-refusal.js';
import { resumeClaimed } from './resume.js';
import { schedulerOfRun } from './run-scheduler.js';

/** What a reap's scheduler load answers for a run it deferred (a store error, issue #20). */
const DEFERRED = Symbol('deferred');
/** How many of its own stranded runs a worker recovers in one pass: a tick's claim (ticker BATCH). */
const RECOVER_LIMIT = 1000;
/** How many runs (and processes, and workflow steps) of lost workers one reap reads of each kind. */
const LOST_LIMIT = 1000;

/** What a reap found and did. */
export interface ReapResult {
  /** Runs of dead workers that were running: ended `failed`, reason `worker-lost`. */
  readonly lost: number;
  /**
   * Runs a dead worker had claimed but not started, and manual fires (which no worker holds
   * yet): taken over and started here, once.
   */
  readonly resumed: number;
}

/** Who reaps (see {@link reap}). */
export interface Reaper {
  readonly workerId: string;
  /** Another worker is dead once its heartbeat is older than this, milliseconds. */
  readonly deadAfterMs: number;
  /** True once the worker is stopping: nothing more is taken over. */
  readonly stopping: () => boolean;
  /**
   * Whether this reap looks for lost workers' started runs, processes and workflow runs
   * (decisions/lost-work.ts): only when a worker may have left some, and now and then.
   */
  readonly scanLost: boolean;
}

/**
 * Finishes the work of workers whose lease lapsed (decisions §5): first the process groups
 * they left running on this host are ended (see `endLeftoverGroups`); then their running runs end
 * `failed` with reason `worker-lost` (process, END line, run log) and free the overlap slot;
 * runs they claimed but never started (and manual fires, which no worker holds yet) are taken
 * over and dispatched here; waiting runs whose lane is free get their turn; stop requests for
 * processes running here are applied. Each exactly once: every step is a compare-and-swap on
 * the run's state and worker. Who is dead is decided by each of these reads as it runs
 * (`Liveness`), never by a list read before the leftovers were ended.
 *
 * The caller renews its lease first. With `othersDead`, every other worker is dead (a SQLite
 * store at start).
 * @throws a store error, after the rest of the reap, when one met loading a run's scheduler
 *   deferred that run: it stays claimed or queued, held here, for the next pass (issue #20).
 */
export async function reap(
  rt: Runtime,
  executor: Executor,
  { workerId, deadAfterMs, stopping, scanLost }: Reaper,
  othersDead = false,
): Promise<ReapResult> {
  const { repos, clock, log } = rt;
  const now = clock.now();
  // Not a list of live workers read once: each statement below decides who is dead as it runs,
  // so a worker that registers or renews while the leftovers are ended (seconds) keeps its work.
  const liveness: Liveness = othersDead ? { kind: 'only', workerId } : leaseLiveness(now, deadAfterMs);
  let lost = 0;
  let resumed = 0;
  // Manual fires are handed to workers this way: routine, not the work of a lost worker; so are
  // the queued runs a worker released when it stopped.
  let manualFires = 0;
  let released = 0;
  // A store error loading a run's scheduler defers that run (it stays claimed or queued, held
  // here) and fails this reap once the rest is done, so that the next pass tries it again.
  let deferred: unknown;
  const defer = (error: unknown): typeof DEFERRED => {
    deferred ??= error;
    return DEFERRED;
  };
  const lostRuns = scanLost ? await repos.runs.orphaned('started', liveness, LOST_LIMIT) : [];
  const lostSteps = scanLost ? await repos.workflowRuns.lostSteps(liveness, LOST_LIMIT) : [];
  // What lost workers left running on this host ends before any of their work is ended or resumed.
  if (scanLost) await endLeftoverGroups(rt, liveness, { runs: lostRuns, steps: lostSteps });
  // Read again after the leftovers (seconds): a run whose worker renewed meanwhile is its own
  // again. Only runs whose processes were looked for above are ended.
  const looked = new Set(lostRuns.map((run) => run.correlationId));
  const stillLost = looked.size === 0 ? [] : await repos.runs.orphaned('started', liveness, LOST_LIMIT);
  // Runs handed to an agent service are the store's, not their worker's (decisions §5, issue #25):
  // this worker adopts them with a new attempt, and their service's callbacks or silence end them.
  const storeOwned = await adoptAgentRuns(rt, workerId, stillLost, now);
  for (const run of stillLost) {
    if (storeOwned.has(run.correlationId)) continue;
    if (looked.has(run.correlationId) && (await endLost(rt, executor, run, now, defer))) lost++;
  }
  // Claimed runs of lost workers (and manual fires): a few queries for the lot. A store error
  // reading their schedulers takes none of them over; it fails this reap once the rest is done.
  const orphans = await repos.runs.orphaned('claimed', liveness, LOST_LIMIT);
  const taken = await resumeClaimed(rt, executor, orphans, {
    takeOver: true,
    stopping,
  }).catch((error: unknown) => {
    defer(error);
    return { resumed: 0, manualFires: 0 };
  });
  resumed += taken.resumed;
  manualFires += taken.manualFires;
  // Waiting runs whose lane is free (after a restart, or whose active run ended on a lost worker).
  for (const waiting of await repos.lanes.waitingWithoutActive(100)) {
    const run = await repos.runs.get(waiting.correlationId);
    if (run !== undefined && (await executor.promoteWaiting(run).catch(defer)) === true) {
      resumed++;
      if (waiting.workerId === null) released++;
    }
  }
  // Backfill queues whose turn has come (issue #22): a backfill just asked for, or one whose
  // previous occurrence ended on a lost worker.
  let backfilled = 0;
  for (const lane of await repos.backfills.ready(100)) {
    if ((await executor.promoteWaiting(lane).catch(defer)) === true) backfilled++;
  }
  // This worker's own runs that no dispatch of its carries any more (a store error cut it short):
  // as many as a tick claims, so that one pass recovers a whole claim (issue #12). A run
  // dispatched when the read began is carried, even if it ended before the read returned: the
  // read shows it as it was (a noop run is claimed, started and ended within one read).
  const carried = executor.dispatchingNow();
  const held = await repos.runs.heldBy(workerId, ['claimed', 'started'], RECOVER_LIMIT);
  const handedOff = await repos.agentRuns.handedOff(
    held.filter((run) => run.state === 'started').map((run) => run.correlationId),
  );
  for (const run of held) {
    if (
      handedOff.has(run.correlationId) ||
      carried.has(run.correlationId) ||
      executor.dispatching(run.correlationId) ||
      (run.processId !== null && executor.runsProcess(run.processId))
    )
      continue;
    if (run.state === 'claimed') {
      const scheduler = await schedulerOfRun(rt.repos, run).catch(defer);
      if (scheduler !== undefined && scheduler !== DEFERRED) {
        executor.start(run, scheduler);
        resumed++;
      }
    } else if (await endLost(rt, executor, run, now, defer)) {
      lost++;
    }
  }
  // Processes whose run another worker already ended, or whose worker is gone (not an agent run's).
  const orphanedProcesses = scanLost ? await repos.processes.orphaned(liveness, LOST_LIMIT) : [];
  const agentProcesses = await repos.agentRuns.handedOffProcesses(orphanedProcesses);
  for (const processId of orphanedProcesses) {
    if (executor.runsProcess(processId) || agentProcesses.has(processId)) continue;
    await repos.processes.transition(processId, ACTIVE_STATUSES, {
      status: 'failed',
      ended_at: now,
      reason: 'worker-lost',
    });
  }
  // Workflow runs of dead workers end failed; the scheduler runs that held them ended above.
  for (const id of scanLost ? await repos.workflowRuns.orphaned(liveness, 100) : []) {
    if (await repos.workflowRuns.end(id, 'failed', 'worker-lost', now)) lost++;
  }
  // Agent runs whose service stayed silent too long (issue #25), whichever worker holds them.
  await endSilentAgentRuns(rt, executor, now);
  // Stops of agent runs (cancelPrevious, a stop request) and the answers given in the inbox go to
  // their services (issue #25) beside the loop: a slow service holds up no tick.
  executor.deliverAside(async () => {
    await stopAgentRuns(rt, now, (run) => executor.promoteWaiting(run));
    await deliverAnswers(rt, now);
  });
  await executor.applyStopRequests();
  const retired = othersDead ? [] : await repos.workers.retireLapsed(now, deadAfterMs);
  const takenOver = resumed - manualFires - released;
  if (lost + takenOver + retired.length > 0)
    log.warn({ lost, resumed: takenOver, retired }, 'finished the work of lost workers');
  if (manualFires > 0) log.info({ manualFires }, 'manual fires dispatched');
  if (released > 0) log.info({ queued: released }, 'queued runs of a stopped worker resumed');
  if (backfilled > 0) log.info({ backfilled }, 'backfill occurrences given their turn');
  if (deferred !== undefined) throw deferred;
  return { lost, resumed };
}

// `defer` takes a store error met loading the scheduler of the run waiting behind it (see reap).
async function endLost(
  rt: Runtime,
  executor: Executor,
  run: Run,
  now: number,
  defer: (error: unknown) => unknown,
): Promise<boolean> {
  const { log } = rt;
  // A one-shot whose process never ran is not used up (spec §10a): released and tried again.
  if (await releaseUnentered(rt, executor.recorder, run, undefined, 'worker-lost', false)) return true;
  // A run recorded started always shows its START line before its END line (issue #20).
  const opening = await missingStartLine(rt, run);
  // Its end, END line and final log in one transaction (spec §9a), its process marked failed,
  // and its lane to the run waiting behind it (here): a store that fails the end leaves the run
  // started and orphaned, and the next reap ends it.
  const ended = await executor.endFailed(run, {
    reason: EndReason.WORKER_LOST,
    from: 'started',
    at: now,
    opening,
    promotionFailed: defer,
  });
  if (!ended) return false;
  log.warn(
    { scheduler: run.name, correlationId: run.correlationId, worker: run.workerId },
    'its worker was lost',
  );
  return true;
}
