import { startRefusal } from '../decisions/start-refusal.js';
import { feedRow } from '../store/feed.js';
import { inboxRow } from '../store/inbox.js';
import { releaseRefusedOneShot } from '../store/refusals.js';
import type { Run } from '../store/runs.js';
import { formatInstant } from '../time/instant.js';
import type { EffectiveScheduler } from './catalog.js';
import type { Runtime } from './context.js';
import { feedLineOf, type RunRecorder } from './recorder.js';

/*
 * A one-shot (`at:`) whose start is refused is not consumed (spec §10a): no fired marker, no trash.
 * Its run is released and the refusal recorded once — feed, inbox, metrics — and the occurrence is
 * planned again only by a refresh of its project or a worker's start, never by the tick itself.
 */

/** The outcome of a refused one-shot run, in its feed line, run log and metrics. */
export const REFUSED = 'refused';

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
 * Records the refused start of the one-shot run `run` (held by this worker in state `from`) and
 * releases its occurrence (`releaseRefusedOneShot`): a SKIPPED feed line with outcome `refused`
 * and the reason, an inbox item for its `runAs` user, its run log, and the metric — each once,
 * by the one path that released it.
 *
 * @returns whether this call released it.
 */
export async function refuseOneShot(
  rt: Runtime,
  recorder: RunRecorder,
  run: Run,
  scheduler: EffectiveScheduler,
  reason: string,
  from: Run['state'],
): Promise<boolean> {
  const { clock, log } = rt;
  const at = clock.now();
  const refused: Run = { ...run, state: 'skipped', outcome: REFUSED, reason, endedAt: at };
  const days = await recorder.retentionDays(run.tenant, run.project);
  const released = await releaseRefusedOneShot(rt.repos.store, {
    correlationId: run.correlationId,
    workerId: run.workerId as string,
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
