import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Where a pid means something (decisions §5 fencing): one host, one boot of its kernel, one pid
 * namespace. Two processes agree on what a pid names only when all three are equal.
 */
export interface HostIdentity {
  /** `os.hostname()`. */
  readonly host: string;
  /** `/proc/sys/kernel/random/boot_id`, new at each boot; null where there is no `/proc`. */
  readonly bootId: string | null;
  /** The pid namespace, `readlink /proc/self/ns/pid` (e.g. `pid:[4026531836]`); null where there is none. */
  readonly pidNamespace: string | null;
}

/** What is recorded of a process group so that it can be found again safely (see {@link endGroup}). */
export interface GroupIdentity extends HostIdentity {
  /** The process group id: the pid of its leader. */
  readonly pgid: number;
  /**
   * The leader's start time, clock ticks since boot (`/proc/<pid>/stat` field 22); null where it
   * could not be read (no `/proc`, or the leader was already gone).
   */
  readonly leaderStartTicks: number | null;
}

/** The fields of `/proc/<pid>/stat` this module reads. */
export interface ProcStat {
  /** Field 3: `R`, `S`, `D`, `Z` (zombie: exited, not reaped), `X` (dead) and so on. */
  readonly state: string;
  /** Field 5: the process group id. */
  readonly pgrp: number;
  /** Field 22: start time, clock ticks since boot. */
  readonly startTicks: number;
}

/**
 * Parses the text of `/proc/<pid>/stat`; undefined when it is not one. The command name (field 2)
 * is in parentheses and may itself hold spaces and parentheses, so the fields are read after the
 * last `)`.
 */
export function parseStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  // Field 3 onwards; fields[0] is field 3.
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/u);
  const state = fields[0];
  const pgrp = Number(fields[2]);
  const startTicks = Number(fields[19]);
  if (state === undefined || !Number.isSafeInteger(pgrp) || !Number.isSafeInteger(startTicks))
    return undefined;
  return { state, pgrp, startTicks };
}

let procMounted: boolean | undefined;

/** Whether this platform has a Linux-style `/proc` to verify processes with (read once). */
export function hasProc(): boolean {
  procMounted ??= readText('/proc/self/stat') !== undefined;
  return procMounted;
}

/** The `/proc/<pid>/stat` fields of `pid`; undefined when there is no such process (or no `/proc`). */
export function readStat(pid: number): ProcStat | undefined {
  const text = readText(`/proc/${pid}/stat`);
  return text === undefined ? undefined : parseStat(text);
}

let here: HostIdentity | undefined;

/** The identity of this process's host, boot and pid namespace (read once: none of them changes). */
export function hostIdentity(): HostIdentity {
  here ??= {
    host: hostname(),
    bootId: readText('/proc/sys/kernel/random/boot_id')?.trim() || null,
    pidNamespace: readLink('/proc/self/ns/pid'),
  };
  return here;
}

/**
 * Whether a pid recorded at `recorded` names a process here: same host name, and a boot id and pid
 * namespace that are known and equal. Without them nothing recorded is ever taken for ours.
 */
export function sameHost(recorded: HostIdentity, current: HostIdentity = hostIdentity()): boolean {
  return (
    recorded.host === current.host &&
    recorded.bootId !== null &&
    recorded.bootId === current.bootId &&
    recorded.pidNamespace !== null &&
    recorded.pidNamespace === current.pidNamespace
  );
}

/**
 * The identity of the group `pgid` led by a process started here a moment ago. Call it at once
 * after the spawn, while the leader cannot have been reaped yet (its parent reaps it only in a
 * later turn of the event loop; a zombie still has its start time).
 */
export function identifyGroup(pgid: number): GroupIdentity {
  return { ...hostIdentity(), pgid, leaderStartTicks: readStat(pgid)?.startTicks ?? null };
}

/**
 * The live processes (not zombies) whose process group is `pgid`, read from `/proc`; empty
 * where there is no `/proc`. Processes this user may not read are still listed (their stat is
 * world-readable).
 */
export function groupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const stat = readStat(pid);
    if (stat !== undefined && stat.pgrp === pgid && !isDead(stat)) members.push(pid);
  }
  return members;
}

/**
 * Whether a process of group `pgid` is still running. `kill(-pgid, 0)` first (one system call,
 * the common answer "none"); then, where there is `/proc`, zombies do not count: they have
 * exited and only wait for a parent to reap them.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    // EPERM: a member exists that this user may not signal.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return hasProc() ? groupMembers(pgid).length > 0 : true;
}

/** How {@link endGroup} or {@link terminateGroup} went. */
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
   * It cannot be verified here (no `/proc`, no recorded start time, or recorded on another host,
   * boot or pid namespace): nothing was signalled.
   */
  | 'unverified';

/** Timings of {@link endGroup} and {@link terminateGroup}, milliseconds. */
export interface EndGroupOptions {
  /** Between SIGTERM and SIGKILL; default {@link DEFAULT_GRACE_MS}. */
  readonly graceMs?: number;
  /** How long to wait for the group to be gone after SIGKILL; default {@link KILL_WAIT_MS}. */
  readonly killWaitMs?: number;
}

/** Default time a group gets between SIGTERM and SIGKILL, milliseconds (the shell engine's default too). */
export const DEFAULT_GRACE_MS = 2000;
/** How long a SIGKILLed group is waited for, milliseconds: the kernel ends it at once, barring `D` state. */
export const KILL_WAIT_MS = 1000;
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 100;

/**
 * Ends a group recorded by {@link identifyGroup}, possibly by an earlier process (decisions §5
 * fencing: a dead worker's leftovers), without ever signalling a process that merely reuses a
 * recorded pid:
 *
 * - recorded on another host, boot or pid namespace, without a start time, or on a platform
 *   without `/proc` → `unverified`, nothing signalled;
 * - the leader's pid is alive with the recorded start time → it is the same leader: the group is
 *   signalled;
 * - the leader's pid is alive with another start time → `reused`, nothing signalled (and any
 *   group of that number is the new process's);
 * - the leader is gone: its members, the processes whose group is `pgid`, are signalled — Linux
 *   does not hand out a pid that is still some group's id, so they are the recorded group's;
 *   none → `gone`.
 *
 * Signalling is SIGTERM to the group, then SIGKILL after `graceMs` if a member still runs; the
 * promise resolves once none runs (`ended`) or `killWaitMs` after the SIGKILL (`survived`).
 * Never rejects.
 *
 * The limit: a group whose leader exited and whose last member exited, whose number the kernel
 * then gave to a new process that made it a group of its own and exited in turn, between the
 * record and this call, would be taken for the recorded one (every step needed for it is rare,
 * and pids are handed out in increasing order up to `pid_max` before any is reused).
 */
export async function endGroup(group: GroupIdentity, options: EndGroupOptions = {}): Promise<GroupEnding> {
  if (!hasProc() || group.leaderStartTicks === null || !sameHost(group)) return 'unverified';
  const leader = readStat(group.pgid);
  if (leader !== undefined && leader.startTicks !== group.leaderStartTicks) return 'reused';
  if ((leader === undefined || isDead(leader)) && groupMembers(group.pgid).length === 0) return 'gone';
  return terminateGroup(group.pgid, options);
}

/**
 * SIGTERM to the process group `pgid`, then SIGKILL after `graceMs` if a process of it still
 * runs; resolves once none runs (`ended`, or `gone` when none ran to begin with) or `killWaitMs`
 * after the SIGKILL (`survived`). Only for a group the caller knows is its own: the parent of its
 * leader, or after {@link endGroup} verified it. Never rejects.
 */
export async function terminateGroup(pgid: number, options: EndGroupOptions = {}): Promise<GroupEnding> {
  if (!groupAlive(pgid)) return 'gone';
  signalGroup(pgid, 'SIGTERM');
  if (await goneWithin(pgid, options.graceMs ?? DEFAULT_GRACE_MS)) return 'ended';
  signalGroup(pgid, 'SIGKILL');
  return (await goneWithin(pgid, options.killWaitMs ?? KILL_WAIT_MS)) ? 'ended' : 'survived';
}

/** Sends `signal` to the group `pgid`; a group that is gone already (ESRCH) is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: every process of the group has exited; EPERM: one this user may not signal.
  }
}

/** Resolves true once no process of group `pgid` runs, false when `ms` passed first. */
export async function goneWithin(pgid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  // Most groups are gone within a poll or two; a stubborn one is looked at less often (a look
  // may read every `/proc/<pid>/stat`: about 10 ms for 150 processes).
  for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
    if (!groupAlive(pgid)) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(poll, left)));
  }
}

/**
 * The process groups of the live processes here whose environment, as they were started with it
 * (`/proc/<pid>/environ`), sets `variable` to one of `values`: value → the group ids, never this
 * process's own group. Only processes of this user can be read; empty where there is no `/proc`. A value unique to one run
 * (its process id) names that run's processes and their descendants, whatever group they are in.
 */
export function groupsCarrying(variable: string, values: ReadonlySet<string>): Map<string, Set<number>> {
  const found = new Map<string, Set<number>>();
  if (values.size === 0 || !hasProc()) return found;
  const prefix = `${variable}=`;
  // Never this process's own group (an engine that did not give its child a group of its own).
  const own = readStat(process.pid)?.pgrp;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const environ = readText(`/proc/${pid}/environ`);
    if (environ === undefined || !environ.includes(prefix)) continue;
    const value = environ
      .split('\0')
      .find((line) => line.startsWith(prefix))
      ?.slice(prefix.length);
    if (value === undefined || !values.has(value)) continue;
    const stat = readStat(pid);
    if (stat === undefined || isDead(stat) || stat.pgrp === own || stat.pgrp <= 1) continue;
    const groups = found.get(value) ?? new Set<number>();
    groups.add(stat.pgrp);
    found.set(value, groups);
  }
  return found;
}

function isDead(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X';
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
