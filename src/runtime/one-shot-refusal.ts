import type { EffectiveScheduler } from '../catalog/catalog.js';
import { startRefusal } from '../decisions/start-refusal.js';
import { LEASE_LOST } from '../fencing/lease.js';
import { RunOutcome } from '../runs/outcomes.js';
import { releaseRun } from '../runs/transitions.js';
import { feedRow } from '../store/feed.js';
import { inboxRow } from '../store/inbox.js';
import { releaseOneShot } from '../store/refusals.js';
import type { Run } from '../store/runs.js';
import { formatInstant } from '../time/instant.js';
import type { Runtime } from './context.js';
import type { DispatchContext } from './dispatch-context.js';
import { SHUTDOWN_REASON } from './final-stop.js';
import { feedLineOf, type RunRecorder } from './recorder.js';

/*
 * A one-shot (`at:`) is used up only by a start (spec §10a): no fired marker, no trash otherwise.
 * One whose start is refused is released and the refusal recorded once — feed, inbox, metrics —
 * and the occurrence is planned again only by a refresh of its project or a worker's start, never
 * by the tick itself. One whose attempt never entered its engine because the worker lost its
 * lease or was stopping ends that attempt's run cancelled, and is planned again at once under a
 * run of its own (issue #20).
 */

/** The outcome of a refused one-shot run, in its feed line, run log and metrics. */
export const REFUSED = RunOutcome.REFUSED;

/** When a refused one-shot is tried again, as the feed and the inbox tell its user. */
const RETRIED = 'when its project is refreshed or a worker starts';

/**
 * Why the claimed one-shot run `run` of `scheduler` cannot start on this worker (a workflow target
 * while workflows are off, an engine that is not registered), or undefined: another trigger, or
 * nothing refuses it.
 */
export function oneShotRefusal(rt: Runtime, run: Run, scheduler: EffectiveScheduler): string | undefined {
  if (run.trigger !== 'at' || scheduler.definition.trigger.kind !== 'at') return undefined;
  const engine = scheduler.recipe?.engine;
  return startRefusal(scheduler.definition.target, {
    workflowsEnabled: rt.settings.workflowsEnabled !== false,
    engine:
      engine === undefined ? undefined : { name: engine, registered: rt.engines.get(engine) !== undefined },
  });
}

/**
 * Records the refused start of the one-shot run `run` (held by this worker, `ctx.workerId`, in
 * state `from`) and releases its occurrence (`releaseOneShot`): a SKIPPED feed line with outcome
 * `refused` and the reason, an inbox item for its `runAs` user, its run log, and the metric —
 * each once, by the one path that released it.
 *
 * @returns whether this call released it.
 */
export async function refuseOneShot(
  ctx: Pick<DispatchContext, 'rt' | 'recorder' | 'workerId'>,
  run: Run,
  scheduler: EffectiveScheduler,
  reason: string,
  from: Run['state'],
): Promise<boolean> {
  const { rt, recorder } = ctx;
  const { clock, log } = rt;
  const at = clock.now();
  const refused: Run = { ...run, state: 'skipped', outcome: REFUSED, reason, endedAt: at };
  const days = await recorder.retentionDays(run.tenant, run.project);
  const released = await releaseOneShot(rt.repos.store, {
    correlationId: run.correlationId,
    workerId: ctx.workerId,
    from,
    line: feedRow(feedLineOf(refused, 'SKIPPED', at, REFUSED, { reason, retried: RETRIED })),
    inbox: inboxRow({
      tenant: run.tenant,
      user: run.runAs,
      kind: 'one-shot-refused',
      title: `${run.name} did not start: ${reason}`,
      body:
        `The one-shot scheduler ${run.name} was due at ${formatInstant(run.scheduledFor)} and did not start: ${reason}. ` +
        `It was not used up: it stays scheduled and is tried again ${RETRIED}. Its log: ${run.logPath}`,
      project: run.project,
      scheduler: run.name,
      correlationId: run.correlationId,
      logPath: run.logPath,
      createdAt: at,
    }),
    log: recorder.runLogRow(refused, scheduler, days, at),
  });
  if (!released) return false;
  rt.metrics?.runs.inc({ outcome: REFUSED, trigger: run.trigger });
  recorder.traced(refused, scheduler);
  log.warn(
    {
      scheduler: run.name,
      correlationId: run.correlationId,
      scheduledFor: formatInstant(run.scheduledFor),
      reason,
    },
    'one-shot did not start; it stays scheduled and is tried again when its project is refreshed or a worker starts',
  );
  return true;
}

/**
 * Why an attempt may end before entering its engine and leave its one-shot unused: the worker's
 * doing (its lease lost, its stop, its loss to another worker, a spawn the store failed), not a
 * stop someone asked for.
 */
const RETRIED_AT_ONCE = new Set<string>([LEASE_LOST, SHUTDOWN_REASON, 'worker-lost', 'spawn-failed']);

/**
 * Whether a one-shot attempt that ended with `reason` before entering its engine is released
 * rather than used up: the worker lost its lease, was stopping or lost, or the store failed its
 * spawn (spec §10a: a failed spawn sets no marker); not a stop someone asked for.
 */
export function releasedUnentered(reason: string | null | undefined): boolean {
  return reason !== null && reason !== undefined && RETRIED_AT_ONCE.has(reason);
}

/**
 * Releases the started one-shot run `run` whose attempt never entered its engine, fenced by the
 * attempt's worker and token: its START line (written with its start) gets its END line, outcome
 * `cancelled` with `reason`, its process row ends `stopped`, its run log says so, and its
 * occurrence is planned again at once — for this worker once it may start runs again, or for the
 * next one — under a run of its own. No inbox item: nothing is asked of its user.
 *
 * @param knownUnentered the caller saw the attempt end without entering its engine (its own
 *   worker). Otherwise (a reap, a dispatch that failed) the process row must still be `ready`: an
 *   attempt moves it to `running` before it enters its engine, so `ready` is never entered.
 * @returns whether this call released it (false: the attempt is no longer the run's, or it may
 *   have entered its engine).
 */
export async function releaseUnentered(
  rt: Runtime,
  recorder: RunRecorder,
  run: Run,
  scheduler: EffectiveScheduler | undefined,
  reason: string,
  knownUnentered: boolean,
): Promise<boolean> {
  const { clock, log } = rt;
  if (run.trigger !== 'at' || run.processId === null || run.workerId === null) return false;
  const at = clock.now();
  const released = releaseRun(run, reason, at);
  const days = await recorder.retentionDays(run.tenant, run.project);
  const done = await releaseOneShot(rt.repos.store, {
    correlationId: run.correlationId,
    workerId: run.workerId,
    from: 'started',
    fencingToken: run.fencingToken,
    process: { id: run.processId, reason, at, mustBeReady: !knownUnentered },
    line: feedRow(
      feedLineOf(released, 'END', at, 'cancelled', { processId: run.processId, reason, retried: 'at once' }),
    ),
    log: recorder.runLogRow(released, scheduler, days, at),
    replan: { key: run, instant: run.scheduledFor, at },
  });
  if (!done) return false;
  rt.metrics?.runs.inc({ outcome: 'cancelled', trigger: run.trigger });
  recorder.traced(released, scheduler);
  log.warn(
    {
      scheduler: run.name,
      correlationId: run.correlationId,
      scheduledFor: formatInstant(run.scheduledFor),
      reason,
    },
    'one-shot stopped before its process started; it stays scheduled and is tried again at once',
  );
  return true;
}
