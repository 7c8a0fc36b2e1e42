import type { EffectiveScheduler } from '../catalog/catalog.js';
import { jitteredFireTime, jitterOffset } from '../decisions/jitter.js';
import type { PendingRun } from '../runs/run.js';

/**
 * The instant a scheduled run starts at (UTC ms): its occurrence, delayed by its scheduler's
 * jitter offset when it has `jitter` (issue #22); `scheduledFor` stays the occurrence.
 */
export function fireInstantOf(run: PendingRun, scheduler: EffectiveScheduler): number {
  const { definition } = scheduler;
  if (run.trigger !== 'cron' || definition.jitterMs === undefined) return run.scheduledFor;
  return jitteredFireTime(definition, run.scheduledFor, jitterOffset(run, definition.jitterMs));
}
