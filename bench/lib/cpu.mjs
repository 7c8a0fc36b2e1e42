import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time from Linux's `/proc`, for the per-run cost lines: the processes a benchmark started
 * (workers, runners) by pid, and the PostgreSQL server's processes (backends, WAL writer,
 * checkpointer, autovacuum) by name. Milliseconds of user + system time. On a system without
 * `/proc` every figure is null, and the report says so instead of a cost.
 */

let ticks;
function msPerTick() {
  if (ticks === undefined) {
    try {
      ticks = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticks = 10; // USER_HZ is 100 on every Linux configuration in use
    }
  }
  return ticks;
}

// The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses).
function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    return { comm: text.slice(text.indexOf('(') + 1, close), rest: text.slice(close + 2).split(' ') };
  } catch {
    return undefined;
  }
}

// After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
const own = (rest) => Number(rest[11]) + Number(rest[12]);
const reaped = (rest) => Number(rest[13]) + Number(rest[14]);

/**
 * CPU milliseconds the processes `pids` used so far, their reaped children's included (an engine's
 * child process is part of a run's cost); a process that exited counts nothing. Null without /proc.
 */
export function processesCpuMs(pids) {
  let sum = 0;
  let seen = false;
  for (const pid of pids) {
    const stat = statFields(pid);
    if (stat === undefined) continue;
    seen = true;
    sum += own(stat.rest) + reaped(stat.rest);
  }
  return seen ? sum * msPerTick() : null;
}

/**
 * CPU milliseconds every PostgreSQL server process on this machine used so far: each process named
 * `postgres` counts its own time, and the postmaster (a `postgres` whose parent is not one) also
 * the time of the backends it has reaped, so that connections that closed within a window still
 * count. Null when no such process is visible (a server elsewhere, or no /proc).
 */
export function postgresCpuMs() {
  let entries;
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const stats = new Map();
  for (const pid of entries) {
    const stat = statFields(pid);
    if (stat?.comm === 'postgres') stats.set(pid, stat);
  }
  if (stats.size === 0) return null;
  let sum = 0;
  for (const stat of stats.values()) {
    sum += own(stat.rest);
    if (!stats.has(stat.rest[1])) sum += reaped(stat.rest);
  }
  return sum * msPerTick();
}

/**
 * A CPU meter over a window: `start()`, then `stop()` gives the CPU milliseconds the `pids` and
 * (with `postgres`) the PostgreSQL server used since, each null where unmeasured.
 */
export function cpuMeter(pids, { postgres = false } = {}) {
  let from;
  const delta = (a, b) => (a === null || b === null ? null : b - a);
  return {
    start() {
      from = { own: processesCpuMs(pids), pg: postgres ? postgresCpuMs() : null };
    },
    stop() {
      return {
        processMs: delta(from.own, processesCpuMs(pids)),
        postgresMs: postgres ? delta(from.pg, postgresCpuMs()) : null,
      };
    },
  };
}

/** CPU milliseconds per unit (run, job) of a meter's reading, or null. */
export function perUnit(ms, units) {
  return ms === null || ms === undefined || units <= 0 ? null : ms / units;
}
