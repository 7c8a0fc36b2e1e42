import {
  checkRecorded,
  type EndGroupOptions,
  type GroupEnding,
  terminateGroups,
} from '../processes/group-ending.js';
import { groupsCarrying, hasProc, hostIdentity } from '../processes/process-group.js';
import type { Runtime } from '../runtime/context.js';
import type { Liveness } from '../store/liveness.js';
import type { LeftoverGroup } from '../store/process-groups.js';
import type { Run } from '../store/runs.js';
import type { LostStep } from '../store/workflow-runs.js';

/** How many leftover groups one call ends at most; the next reap takes the rest. */
const LEFTOVER_LIMIT = 1000;

/** What {@link endLeftoverGroups} did, in counts. */
export interface LeftoverResult {
  /** Groups signalled and gone (or still there after SIGKILL: `survived`, logged as such). */
  readonly ended: number;
  /** Recorded groups found with nothing left running, or whose leader pid names another process now. */
  readonly gone: number;
  /** Recorded groups that cannot be verified on this platform: never signalled. */
  readonly unverified: number;
}

/** The work of lost workers whose processes are looked for by their environment (see {@link endLeftoverGroups}). */
export interface LostWork {
  /** Runs of lost workers still recorded as started. */
  readonly runs?: readonly Pick<Run, 'processId' | 'name' | 'tenant' | 'project'>[];
  /** Running steps of lost workers' workflow runs. */
  readonly steps?: readonly LostStep[];
}

/** Who started a group, for the log line of its end. */
type Origin = Pick<LeftoverGroup, 'processId' | 'pgid' | 'scheduler' | 'tenant' | 'project'> & {
  readonly host?: string;
  readonly workflow?: string;
};

let warnedUnverifiable = false;
const warnedOwn = new Set<number>();

/**
 * Ends what workers that are no longer live by `liveness` left running on this host (decisions
 * §5 fencing), before the caller ends or resumes any of their runs.
 *
 * 1. The open `process_groups` rows recorded on this boot and pid namespace (whatever the host
 *    name was then) by a worker not live: each is checked (never a reused pid: `checkRecorded`),
 *    and marked ended with how it went. Only groups this store recorded (issue #26).
 * 2. The processes still carrying, in their environment, the `URSA_PROCESS_ID` of one of `lost`'s
 *    runs or workflow steps: their groups are ended too. This covers a group whose record was not
 *    written yet when its worker died (the moment between a spawn and its row), and a descendant
 *    that left its group. A workflow step's process id is on its step, its scheduler run has none.
 *    Never work a worker of another store held: a copy's runs name the source's processes.
 *
 * All these groups end together: SIGTERM to each, one shared grace, SIGKILL to what is left, one
 * scan of `/proc` a poll round (`terminateGroups`); the event loop runs between rounds, so the
 * caller's lease renewals go on however many groups there are.
 *
 * Each group signalled is logged at warn (scheduler, process id, pgid). On a platform without
 * `/proc` nothing is signalled: the rows are marked `unverified`, and that is logged at warn once
 * per process (so is a row without the leader's start time). Rows of other boots or namespaces are
 * left alone. This process's own group is never signalled on any path: its row is left open (a
 * worker outside the group ends it later) and logged at warn once per process. Store errors
 * propagate: the caller's reap fails and is tried again as a whole.
 */
export async function endLeftoverGroups(
  rt: Runtime,
  liveness: Liveness,
  lost: LostWork = {},
  options: EndGroupOptions = {},
): Promise<LeftoverResult> {
  const { repos, clock } = rt;
  const leftovers = await repos.processGroups.leftovers(hostIdentity(), liveness, LEFTOVER_LIMIT);
  if (!hasProc()) {
    warnUnverifiable(rt, leftovers.length);
    for (const group of leftovers) await repos.processGroups.markEnded(group, clock.now(), 'unverified');
    return { ended: 0, gone: 0, unverified: leftovers.length };
  }
  const checks = checkRecorded(leftovers);
  // The processes of lost work that no row led to (or that left their group).
  const origins = lostProcesses(lost);
  // Only this store's: a copied store's runs name the source's processes (issue #26).
  for (const processId of await repos.processGroups.heldElsewhere([...origins.keys()]))
    origins.delete(processId);
  const carrying = groupsCarrying('URSA_PROCESS_ID', new Set(origins.keys()));
  const found: Origin[] = [...carrying].flatMap(([processId, pgids]) => {
    const origin = origins.get(processId) as Omit<Origin, 'pgid'>;
    return [...pgids].map((pgid) => ({ ...origin, pgid }));
  });
  const toEnd = new Set([
    ...leftovers.flatMap((group, i) => (checks[i] === 'signal' ? [group.pgid] : [])),
    ...found.map((origin) => origin.pgid),
  ]);
  const endings = await terminateGroups(toEnd, options);
  const at = clock.now();
  const counts = { ended: 0, gone: 0, unverified: 0 };
  const reported = new Set<number>();
  for (const [i, group] of leftovers.entries()) {
    const check = checks[i] as (typeof checks)[number];
    const ending = check === 'signal' ? (endings.get(group.pgid) as GroupEnding) : check;
    if (ending === 'own') {
      warnOwn(rt, group);
      continue;
    }
    await repos.processGroups.markEnded(group, at, ending);
    if (ending === 'ended' || ending === 'survived') {
      counts.ended++;
      reported.add(group.pgid);
      report(rt, group, ending);
    } else if (ending === 'unverified') counts.unverified++;
    else counts.gone++;
  }
  warnUnverifiable(rt, counts.unverified);
  for (const origin of found) {
    const ending = endings.get(origin.pgid);
    if ((ending !== 'ended' && ending !== 'survived') || reported.has(origin.pgid)) continue;
    reported.add(origin.pgid);
    counts.ended++;
    report(rt, origin, ending);
  }
  return counts;
}

// Process id → who started it, for the lost runs and steps that have one.
function lostProcesses(lost: LostWork): Map<string, Omit<Origin, 'pgid'>> {
  const origins = new Map<string, Omit<Origin, 'pgid'>>();
  for (const run of lost.runs ?? []) {
    if (run.processId === null) continue;
    origins.set(run.processId, {
      processId: run.processId,
      scheduler: run.name,
      tenant: run.tenant,
      project: run.project,
    });
  }
  for (const step of lost.steps ?? []) {
    origins.set(step.processId, {
      processId: step.processId,
      scheduler: null,
      workflow: step.workflow,
      tenant: step.tenant,
      project: step.project,
    });
  }
  return origins;
}

// Once per process: the same leftovers would be named at every start otherwise.
function warnUnverifiable(rt: Runtime, groups: number): void {
  if (groups === 0 || warnedUnverifiable) return;
  warnedUnverifiable = true;
  rt.log.warn(
    { groups },
    'processes an earlier worker started on this host cannot be verified here; they were not stopped',
  );
}

// Once per group and process: every reap finds the row again until a worker outside the group ends it.
function warnOwn(rt: Runtime, group: LeftoverGroup): void {
  if (warnedOwn.has(group.pgid)) return;
  warnedOwn.add(group.pgid);
  rt.log.warn(
    { scheduler: group.scheduler, processId: group.processId, pgid: group.pgid },
    'a lost worker left processes running in this worker’s own process group; they were not stopped (start workers in a process group of their own, e.g. with setsid)',
  );
}

function report(rt: Runtime, group: Origin, ending: 'ended' | 'survived'): void {
  const fields = {
    scheduler: group.scheduler,
    ...(group.workflow === undefined ? {} : { workflow: group.workflow }),
    tenant: group.tenant,
    project: group.project,
    processId: group.processId,
    pgid: group.pgid,
    ...(group.host === undefined ? {} : { recordedOnHost: group.host }),
  };
  if (ending === 'ended')
    rt.log.warn(fields, 'stopped processes a lost worker had left running on this host');
  else
    rt.log.warn(
      fields,
      'processes a lost worker had left running on this host were sent SIGKILL and are still there',
    );
}
