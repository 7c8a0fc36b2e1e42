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
 * Whether a pid recorded at `recorded` names a process here: a boot id and pid namespace that are
 * known and equal to this process's. They identify the kernel that gave the pid out; the host name
 * is not compared (it can change at runtime: DHCP, `hostnamectl`) and serves logs only. Without a
 * boot id and a namespace nothing recorded is ever taken for ours.
 */
export function sameHost(recorded: HostIdentity, current: HostIdentity = hostIdentity()): boolean {
  return (
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
  return membersOf(new Set([pgid])).get(pgid) ?? [];
}

/**
 * The live members (not zombies) of each of the groups `pgids`, from one scan of `/proc` however
 * many groups are asked for (a scan reads every `/proc/<pid>/stat`: about 10 ms for 150
 * processes, on the caller's thread): pgid → member pids, a group with none absent. Empty where
 * there is no `/proc`.
 */
export function membersOf(pgids: ReadonlySet<number>): Map<number, number[]> {
  const members = new Map<number, number[]>();
  if (pgids.size === 0) return members;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return members;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const stat = readStat(pid);
    if (stat === undefined || !pgids.has(stat.pgrp) || isDead(stat)) continue;
    const of = members.get(stat.pgrp) ?? [];
    of.push(pid);
    members.set(stat.pgrp, of);
  }
  return members;
}

/**
 * Whether a process of group `pgid` may still run: `kill(-pgid, 0)` finds one (or one this user
 * may not signal). Zombies count here: see {@link groupAlive}.
 */
export function groupSignallable(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    // EPERM: a member exists that this user may not signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a process of group `pgid` is still running. `kill(-pgid, 0)` first (one system call,
 * the common answer "none"); then, where there is `/proc`, zombies do not count: they have
 * exited and only wait for a parent to reap them.
 */
export function groupAlive(pgid: number): boolean {
  if (!groupSignallable(pgid)) return false;
  return hasProc() ? groupMembers(pgid).length > 0 : true;
}

/**
 * Whether `pgid` is this process's own group (or no group a signal may go to: 0 and 1 would
 * reach the caller's group and every process). Where there is no `/proc` only a group this
 * process leads is known as its own.
 */
export function isOwnGroup(pgid: number): boolean {
  if (!Number.isSafeInteger(pgid) || pgid <= 1 || pgid === process.pid) return true;
  // Read at every call: cheap (one small file), and right even if the group was changed.
  return readStat(process.pid)?.pgrp === pgid;
}

/**
 * Sends `signal` to the group `pgid`: the one place Ursa signals a process group, so that it
 * never signals its own (see {@link isOwnGroup}; a worker started from inside a run's group
 * without `setsid` would end itself). Returns whether the signal was sent: false for its own
 * group, and for a group that is gone already (ESRCH) or one it may not signal (EPERM), which
 * are not errors.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (isOwnGroup(pgid)) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: every process of the group has exited; EPERM: one this user may not signal.
    return false;
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
    // Never this process's own group (an engine that did not give its child a group of its own).
    if (stat === undefined || isDead(stat) || isOwnGroup(stat.pgrp)) continue;
    const groups = found.get(value) ?? new Set<number>();
    groups.add(stat.pgrp);
    found.set(value, groups);
  }
  return found;
}

/** Whether a process has exited: a zombie (`Z`, not reaped yet) or dead (`X`). */
export function isDead(stat: ProcStat): boolean {
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
