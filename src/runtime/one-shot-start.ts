import type { EffectiveScheduler } from '../catalog/catalog.js';
import type { StartedRun } from '../runs/run.js';
import { schedulerPath } from '../scheduler/document.js';
import type { Run } from '../store/runs.js';
import { humanDuration } from '../time/duration.js';
import { formatInstant } from '../time/instant.js';
import { type DispatchContext, persist } from './dispatch-context.js';
import { SimulatedCrash } from './faults.js';
import { releaseUnentered } from './one-shot-refusal.js';

/**
 * {@link oneShotStarted} for a one-shot whose process or workflow run is under way: a store
 * error is logged, never taken for a failed start (the run goes on and ends by its engine), and
 * the next refresh of its project marks and trashes it (it finds the started run).
 */
export async function oneShotUsedUp(
  ctx: DispatchContext,
  started: StartedRun,
  scheduler: EffectiveScheduler,
): Promise<void> {
  try {
    await oneShotStarted(ctx, started, scheduler);
  } catch (error) {
    if (error instanceof SimulatedCrash) throw error;
    ctx.rt.log.warn(
      { err: error, scheduler: started.name, correlationId: started.correlationId },
      'could not mark the one-shot fired; the next refresh of its project does',
    );
  }
}

/**
 * A one-shot's bookkeeping once it started (spec §10a order: spawn, then the fired marker, then
 * the trash — a crash between any two heals at the next refresh instead of running it again),
 * and an inbox item when it started later than the misfire threshold (spec §12).
 */
async function oneShotStarted(
  ctx: DispatchContext,
  started: StartedRun,
  scheduler: EffectiveScheduler,
): Promise<void> {
  const { repos, clock, settings } = ctx.rt;
  const { definition } = scheduler;
  if (definition.trigger.kind !== 'at') return;
  const { startedAt } = started;
  await ctx.faults.afterSpawn?.(started);
  await repos.projects.markFired(
    started.tenant,
    started.project,
    started.name,
    definition.trigger.instant,
    started.correlationId,
    clock.now(),
  );
  await ctx.faults.afterMarker?.(started);
  if (scheduler.source === 'project') {
    // A spawned one-shot leaves the scheduler prefix (spec §10a); its history stays in the feed.
    await repos.documents.trash(
      { tenant: started.tenant, project: started.project, path: schedulerPath(started.name) },
      clock.now(),
    );
  }
  const lateMs = startedAt - started.scheduledFor;
  if (lateMs > settings.misfireThresholdMs) {
    await repos.inbox.add({
      tenant: started.tenant,
      user: started.runAs,
      kind: 'one-shot-late',
      title: `${started.name} ran ${humanDuration(lateMs)} late`,
      body: `The one-shot scheduler ${started.name} was due at ${formatInstant(started.scheduledFor)} and started at ${formatInstant(startedAt)}, more than the misfire threshold after it.`,
      project: started.project,
      scheduler: started.name,
      correlationId: started.correlationId,
      logPath: started.logPath,
      createdAt: startedAt,
    });
  }
}

/** `releaseUnentered`, retried while the store fails (see `persist`). */
export function releaseOneShotRun(
  ctx: DispatchContext,
  run: Run,
  scheduler: EffectiveScheduler,
  reason: string,
  knownUnentered: boolean,
): Promise<boolean> {
  return persist(ctx, 'the release of a one-shot', () =>
    releaseUnentered(ctx.rt, ctx.recorder, run, scheduler, reason, knownUnentered),
  );
}
