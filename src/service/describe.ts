import type { SchedulerDescription } from '../contract/index.js';
import { dstNotes } from '../cron/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime } from '../runtime/context.js';
import { MS_PER_DAY } from '../time/calendar.js';
import { formatInstant, formatOffset } from '../time/instant.js';
import { loadSchedulersWithState, summaryOf } from './listing.js';
import { schedulerMissing } from './missing.js';
import { pausesOf } from './pauses.js';
import { schedulerRunPage } from './run-views.js';
import { upcomingOfScheduler } from './upcoming.js';
import { workerRunning } from './workers.js';

/** How many of its newest runs a description shows. */
export const DESCRIBE_RECENT_RUNS = 5;

/** How far ahead a description looks for daylight-saving transitions, milliseconds (a year). */
const DST_HORIZON_MS = 366 * MS_PER_DAY;

/**
 * One scheduler of a project described (issue #22 item 8; `GET …/scheduler/:name/describe`,
 * `ursa describe`), as of the clock's now: its list entry (pause with its note, bounds with what
 * they counted), its jitter, its next `count` fires with their jittered starts, the DST
 * transitions of the coming year that touch its fire times, what `maxRuns` still allows, its run
 * counts per outcome and its {@link DESCRIBE_RECENT_RUNS} newest runs. With `visibleToAgents`, the
 * counts leave out runs that were `hidden` when claimed, and `runsStarted` and `runsLeft` are
 * null when such runs exist (an agent's view, spec §10b).
 *
 * @throws UrsaError `NOT_FOUND` when neither the project nor `_tenant` has a valid scheduler of
 *   that name; the store's errors.
 */
export async function describeScheduler(
  rt: Runtime,
  tenant: string,
  project: string,
  name: string,
  count: number,
  options: { readonly visibleToAgents?: boolean } = {},
): Promise<SchedulerDescription> {
  const { schedulers, states } = await loadSchedulersWithState(rt, tenant, project);
  const scheduler = schedulers.get(name);
  if (scheduler === undefined) {
    if (options.visibleToAgents) {
      throw new UrsaError(
        'NOT_FOUND',
        `scheduler ${JSON.stringify(name)} does not exist in ${tenant}/${project}`,
      );
    }
    throw await schedulerMissing(rt, tenant, project, name);
  }
  const key = { tenant, project, name };
  const now = rt.clock.now();
  const paused = (await pausesOf(rt, tenant, project))(scheduler);
  const summary = await summaryOf(rt, key, scheduler, states.get(name), paused, await workerRunning(rt));
  const upcoming = await upcomingOfScheduler(rt, key, scheduler, paused, now, count);
  const { definition } = scheduler;
  const { trigger, zone } = definition;
  const dst =
    trigger.kind === 'cron'
      ? dstNotes(trigger.cron, zone, now, now + DST_HORIZON_MS).map((n) => ({
          transition: formatInstant(n.transition),
          effect: n.effect,
          offsetBefore: formatOffset(n.offsetBefore),
          offsetAfter: formatOffset(n.offsetAfter),
          count: n.count,
        }))
      : [];
  const counts = await rt.repos.runs.counts(key, options);
  // An agent is told no count that runs hidden from it make up (spec §10b): with such runs, what
  // maxRuns counted stays unsaid.
  const hiddenRuns =
    options.visibleToAgents === true && (await rt.repos.runs.counts(key)).runs !== counts.runs;
  const bounds =
    hiddenRuns && summary.bounds !== null ? { ...summary.bounds, runsStarted: null } : summary.bounds;
  return {
    ...summary,
    bounds,
    jitter: upcoming.jitter,
    pauseOnFailure: definition.pauseOnFailure ?? null,
    retry:
      definition.retry === undefined
        ? null
        : { attempts: definition.retry.attempts, backoff: definition.retry.backoff },
    idle: upcoming.idle,
    upcoming: upcoming.fires,
    dst,
    runsLeft:
      bounds?.maxRuns == null || bounds.runsStarted === null
        ? null
        : Math.max(0, bounds.maxRuns - bounds.runsStarted),
    counts,
    recentRuns: (
      await schedulerRunPage(rt, tenant, project, name, {
        limit: DESCRIBE_RECENT_RUNS,
        visibleToAgents: options.visibleToAgents === true,
      })
    ).runs,
  };
}
