import { type EffectiveScheduler, loadProjectSchedulers } from '../catalog/catalog.js';
import type { Pause, Upcoming } from '../contract/index.js';
import { boundsSpent } from '../decisions/bounds.js';
import { upcomingFires } from '../decisions/jitter.js';
import type { Runtime } from '../runtime/context.js';
import type { SchedulerKey } from '../store/schedules.js';
import { formatInstant, parseInstant } from '../time/instant.js';
import { schedulerMissing } from './missing.js';
import { pausesOf } from './pauses.js';

/**
 * A scheduler's next `count` fires after `from` (ISO-8601; the clock's now when undefined), as the
 * project sees it after the cascade: its occurrences within its bounds, no more than `maxRuns`
 * leaves, each with the instant its jitter delays it to (issue #22). None while it is disabled,
 * paused or finished, and `idle` says which. `GET …/scheduler/:name/upcoming`, `ursa next --scheduler`.
 *
 * @throws UrsaError `INSTANT_INVALID` (input) for a `from` that is no instant; `NOT_FOUND` when
 *   neither the project nor `_tenant` has a valid scheduler of that name; the store's errors.
 */
export async function upcomingOf(
  rt: Pick<Runtime, 'repos' | 'clock'>,
  tenant: string,
  project: string,
  name: string,
  request: { readonly count: number; readonly from?: string | undefined },
): Promise<Upcoming> {
  const from = request.from === undefined ? rt.clock.now() : parseInstant(request.from, 'from');
  const scheduler = (await loadProjectSchedulers(rt.repos, tenant, project)).schedulers.get(name);
  if (scheduler === undefined) throw await schedulerMissing(rt, tenant, project, name);
  const pause = (await pausesOf(rt, tenant, project))(scheduler);
  return upcomingOfScheduler(rt, { tenant, project, name }, scheduler, pause, from, request.count);
}

/**
 * {@link upcomingOf} for a scheduler already loaded, with its pause (null when not paused), after
 * `from` (UTC ms).
 *
 * @throws the store's errors.
 */
export async function upcomingOfScheduler(
  rt: Pick<Runtime, 'repos'>,
  key: SchedulerKey,
  scheduler: EffectiveScheduler,
  pause: Pause | null,
  from: number,
  count: number,
): Promise<Upcoming> {
  const { definition } = scheduler;
  const { bounds } = definition;
  const runsStarted = bounds.maxRuns === undefined ? 0 : await rt.repos.runs.started(key);
  const idle = definition.enabled
    ? (boundsSpent(bounds, from, runsStarted) ?? null)
    : pause === null
      ? 'disabled'
      : 'paused';
  const runsLeft = bounds.maxRuns === undefined ? undefined : bounds.maxRuns - runsStarted;
  const fires = idle === null ? upcomingFires(definition, key, from, count, runsLeft) : [];
  return {
    name: key.name,
    timezone: definition.zone.id,
    jitter: definition.jitter ?? null,
    idle,
    fires: fires.map((f) => ({ occurrence: formatInstant(f.occurrence), firesAt: formatInstant(f.firesAt) })),
  };
}
