import {
  type GroupIdentity,
  groupSignallable,
  hasProc,
  isDead,
  isOwnGroup,
  membersOf,
  readStat,
  sameHost,
  signalGroup,
} from './process-group.js';

/** How ending a group went ({@link endGroup}, {@link terminateGroups}). */
export type GroupEnding =
  /** Signalled (SIGTERM, and SIGKILL when it outlived the grace); no process of it runs now. */
  | 'ended'
  /** Signalled, and something of it still ran after the SIGKILL and its wait. */
  | 'survived'
  /** Nothing of it was running: nothing was signalled. */
  | 'gone'
  /** Its leader's pid names another process now (another start time): nothing was signalled. */
  | 'reused'
  /**
   * It cannot be verified here (no `/proc`, no recorded start time, or recorded on another boot
   * or pid namespace): nothing was signalled.
   */
  | 'unverified'
  /** It is this process's own group (see `isOwnGroup`): nothing was signalled. */
  | 'own';

/** Timings of ending groups, milliseconds. */
export interface EndGroupOptions {
  /** Between SIGTERM and SIGKILL; default {@link DEFAULT_GRACE_MS}. */
  readonly graceMs?: number;
  /** How long to wait for the groups to be gone after SIGKILL; default {@link KILL_WAIT_MS}. */
  readonly killWaitMs?: number;
}

/** Default time a group gets between SIGTERM and SIGKILL, milliseconds (the shell engine's default too). */
export const DEFAULT_GRACE_MS = 2000;
/** How long a SIGKILLed group is waited for, milliseconds: the kernel ends it at once, barring `D` state. */
export const KILL_WAIT_MS = 1000;
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 100;

/**
 * What may be done with a group recorded by `identifyGroup`, possibly by an earlier process
 * (decisions §5 fencing: a dead worker's leftovers), without ever signalling a process that
 * merely reuses a recorded pid; one scan of `/proc` for all of `groups` (in their order):
 *
 * - recorded on another boot or pid namespace, without a start time, or on a platform without
 *   `/proc` → `unverified`;
 * - the leader's pid is alive with another start time → `reused` (and any group of that number
 *   is the new process's);
 * - the leader is gone and no process is in its group → `gone`;
 * - otherwise `signal`: the leader's pid is alive with the recorded start time (the same leader),
 *   or the leader is gone and the processes left in its group are the recorded group's (Linux
 *   does not hand out a pid that is still some group's id). Pass those to {@link terminateGroups}.
 *
 * The limit: a group whose leader exited and whose last member exited, whose number the kernel
 * then gave to a new process that made it a group of its own and exited in turn, between the
 * record and this call, would be taken for the recorded one (every step needed for it is rare,
 * and pids are handed out in increasing order up to `pid_max` before any is reused).
 */
export function checkRecorded(
  groups: readonly GroupIdentity[],
): (Exclude<GroupEnding, 'ended' | 'survived' | 'own'> | 'signal')[] {
  const leaderless = new Set<number>();
  const checks = groups.map((group) => {
    if (!hasProc() || group.leaderStartTicks === null || !sameHost(group)) return 'unverified' as const;
    const leader = readStat(group.pgid);
    if (leader !== undefined && leader.startTicks !== group.leaderStartTicks) return 'reused' as const;
    if (leader === undefined || isDead(leader)) leaderless.add(group.pgid);
    return 'signal' as const;
  });
  if (leaderless.size === 0) return checks;
  const members = membersOf(leaderless);
  return checks.map((check, i) => {
    const pgid = (groups[i] as GroupIdentity).pgid;
    return check === 'signal' && leaderless.has(pgid) && !members.has(pgid) ? 'gone' : check;
  });
}

/**
 * Ends a recorded group ({@link checkRecorded}, then {@link terminateGroups}). Never rejects.
 */
export async function endGroup(group: GroupIdentity, options: EndGroupOptions = {}): Promise<GroupEnding> {
  const [check] = checkRecorded([group]);
  if (check !== 'signal') return check as GroupEnding;
  return (await terminateGroups([group.pgid], options)).get(group.pgid) as GroupEnding;
}

/**
 * SIGTERM to the process group `pgid`, then SIGKILL after `graceMs` if a process of it still
 * runs (see {@link terminateGroups}). Only for a group the caller knows is its own: the parent
 * of its leader, or after {@link checkRecorded} verified it. Never rejects.
 */
export async function terminateGroup(pgid: number, options: EndGroupOptions = {}): Promise<GroupEnding> {
  return (await terminateGroups([pgid], options)).get(pgid) as GroupEnding;
}

/**
 * Ends the process groups `pgids` together: SIGTERM to every one that runs, one grace
 * (`graceMs`) shared by all, SIGKILL to those still running after it; resolves once none runs or
 * `killWaitMs` after the SIGKILL, with how each went (`ended`, `survived`, `gone` when none of it
 * ran to begin with, `own` for this process's own group, never signalled). However many groups,
 * each poll round (10 ms, doubling to 100 ms) is one `kill(-pgid, 0)` a group and at most one
 * scan of `/proc` for all of them, and the event loop runs between rounds: a worker ending dozens
 * of leftovers still renews its lease. Only for groups the caller knows are its own or verified
 * ({@link checkRecorded}). Never rejects.
 */
export async function terminateGroups(
  pgids: Iterable<number>,
  options: EndGroupOptions = {},
): Promise<Map<number, GroupEnding>> {
  const endings = new Map<number, GroupEnding>();
  const asked = new Set<number>();
  for (const pgid of pgids) {
    if (isOwnGroup(pgid)) endings.set(pgid, 'own');
    else asked.add(pgid);
  }
  const running = stillRunning(asked);
  for (const pgid of asked) if (!running.has(pgid)) endings.set(pgid, 'gone');
  for (const pgid of running) signalGroup(pgid, 'SIGTERM');
  const stubborn = await runningAfter(running, options.graceMs ?? DEFAULT_GRACE_MS);
  for (const pgid of stubborn) signalGroup(pgid, 'SIGKILL');
  const survivors = await runningAfter(stubborn, options.killWaitMs ?? KILL_WAIT_MS);
  for (const pgid of running) endings.set(pgid, survivors.has(pgid) ? 'survived' : 'ended');
  return endings;
}

// The groups of `pgids` a process of which runs: a system call each, then (where there is /proc,
// so that zombies do not count) one scan for those the call did not rule out.
function stillRunning(pgids: ReadonlySet<number>): Set<number> {
  const signallable = new Set([...pgids].filter(groupSignallable));
  if (signallable.size === 0 || !hasProc()) return signallable;
  const members = membersOf(signallable);
  return new Set([...signallable].filter((pgid) => members.has(pgid)));
}

// Polls until none of `pgids` runs or `ms` passed; returns those still running. Most groups are
// gone within a poll or two; stubborn ones are looked at less often.
async function runningAfter(pgids: ReadonlySet<number>, ms: number): Promise<Set<number>> {
  const deadline = performance.now() + ms;
  let left = new Set(pgids);
  for (let poll = FIRST_POLL_MS; left.size > 0; poll = Math.min(poll * 2, MAX_POLL_MS)) {
    const wait = deadline - performance.now();
    if (wait <= 0) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(poll, wait)));
    left = stillRunning(left);
  }
  return left;
}
