import type { Runtime } from '../runtime/context.js';
import type { LeftoverGroup } from '../store/process-groups.js';
import type { Run } from '../store/runs.js';
import {
  type EndGroupOptions,
  endGroup,
  type GroupEnding,
  groupsCarrying,
  hasProc,
  hostIdentity,
  terminateGroup,
} from './process-group.js';

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

let warnedUnverifiable = false;

/**
 * Ends what workers that are no longer live left running on this host (decisions §5 fencing),
 * before the caller ends or resumes any of their runs; `live` are the workers whose lease holds
 * (the caller's reap decides, with every other worker dead for a SQLite store at start).
 *
 * 1. The open `process_groups` rows recorded on this host, boot and pid namespace by a worker not
 *    in `live`: each is ended by `endGroup` (SIGTERM, SIGKILL after the grace; never a reused
 *    pid), all at once, and marked ended with how it went.
 * 2. The processes still carrying the `URSA_PROCESS_ID` of one of `lostRuns` (runs of such
 *    workers still recorded as started) in their environment: their groups are ended too. This
 *    covers a group whose record was not written yet when its worker died (the moment between a
 *    spawn and its row), and a descendant that left its group.
 *
 * Each group signalled is logged at warn (scheduler, process id, pgid). On a platform without
 * `/proc` nothing is signalled: the rows are marked `unverified`, and that is logged at warn once
 * per process (so is a row without the leader's start time). Rows of other hosts, boots or
 * namespaces are left alone. Never signals this process's own group. Store errors propagate: the
 * caller's reap fails and is tried again as a whole.
 */
export async function endLeftoverGroups(
  rt: Runtime,
  live: readonly string[],
  lostRuns: readonly Pick<Run, 'processId' | 'name' | 'tenant' | 'project'>[] = [],
  options: EndGroupOptions = {},
): Promise<LeftoverResult> {
  const { repos, clock } = rt;
  const here = hostIdentity();
  const leftovers = await repos.processGroups.leftovers(here, live, LEFTOVER_LIMIT);
  const counts = { ended: 0, gone: 0, unverified: 0 };
  if (!hasProc()) {
    warnUnverifiable(rt, leftovers.length);
    for (const group of leftovers) await repos.processGroups.markEnded(group, clock.now(), 'unverified');
    return { ...counts, unverified: leftovers.length };
  }
  const endings = await Promise.all(leftovers.map((group) => endGroup(group, options)));
  const at = clock.now();
  for (const [i, group] of leftovers.entries()) {
    const ending = endings[i] as GroupEnding;
    await repos.processGroups.markEnded(group, at, ending);
    if (ending === 'ended' || ending === 'survived') {
      counts.ended++;
      report(rt, group, ending);
    } else if (ending === 'unverified') counts.unverified++;
    else counts.gone++;
  }
  warnUnverifiable(rt, counts.unverified);
  // The processes of lost runs that no row led to (or that left their group).
  const runs = new Map(lostRuns.flatMap((run) => (run.processId === null ? [] : [[run.processId, run]])));
  const carrying = groupsCarrying('URSA_PROCESS_ID', new Set(runs.keys()));
  const found = [...carrying].flatMap(([processId, pgids]) =>
    [...pgids].map((pgid) => ({ processId, pgid })),
  );
  const ended = await Promise.all(found.map(({ pgid }) => terminateGroup(pgid, options)));
  for (const [i, { processId, pgid }] of found.entries()) {
    const ending = ended[i] as GroupEnding;
    if (ending !== 'ended' && ending !== 'survived') continue;
    counts.ended++;
    const run = runs.get(processId);
    report(
      rt,
      {
        processId,
        pgid,
        scheduler: run?.name ?? null,
        tenant: run?.tenant ?? null,
        project: run?.project ?? null,
      },
      ending,
    );
  }
  return counts;
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

function report(
  rt: Runtime,
  group: Pick<LeftoverGroup, 'processId' | 'pgid' | 'scheduler' | 'tenant' | 'project'>,
  ending: 'ended' | 'survived',
): void {
  const fields = {
    scheduler: group.scheduler,
    tenant: group.tenant,
    project: group.project,
    processId: group.processId,
    pgid: group.pgid,
  };
  if (ending === 'ended')
    rt.log.warn(fields, 'stopped processes a lost worker had left running on this host');
  else
    rt.log.warn(
      fields,
      'processes a lost worker had left running on this host were sent SIGKILL and are still there',
    );
}
