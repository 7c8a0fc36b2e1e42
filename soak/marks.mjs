import { readFileSync } from 'node:fs';

/**
 * Accounts the engine-side marks of the soak's shell runs (soak/mark.sh, soak/witness.mjs): what
 * the processes did, whatever the store says. Every shell scheduler of the soak is `overlap: skip`.
 *
 * A run is `<pid> <correlationId>`; its life is [start mark, end]. Its end is its own `E` mark when
 * it wrote one (on exit or on SIGTERM, just before it exits); else (a SIGKILLed group) the instant
 * the witness saw its connection close, which its sleep child holds too: no earlier than the last
 * process of the run was gone. So an overlap is seen where there was none only if the next run
 * started within the witness's reaction time (milliseconds, more on a loaded machine) of that
 * death, and one is missed only if it lasted less than the few milliseconds between a run's spawn
 * and its start mark. A run with neither is alive after the soak's final stop (an orphan) or died
 * before it reached the witness; its end is unknown and taken as never: every later run of its
 * scheduler overlaps it.
 *
 * Returns `started` (the runs with a start mark, each with `end`: exited, terminated, killed,
 * orphan or unknown), `torn`, `endWithoutStart`, `unidentified` (lines that name no run) and:
 * - `overlaps`: runs that started while an earlier run of the same scheduler was alive
 *   (`{ scheduler, run, previous, ms }`, ms the time both were alive, Infinity when unknown);
 * - `duplicates`: occurrences (scheduler and scheduledFor) started more than once;
 * - `orphans`: runs still alive at the end (`open`, the witness's connections then).
 *
 * @param marksFile the `S`/`E` lines of mark.sh; @param witnessFile the `C` lines of the witness;
 * @param open `[{ id, openedUs }]` the witness's connections still open at the end.
 */
export function accountMarks(marksFile, witnessFile, open) {
  const runs = new Map();
  let torn = 0;
  const runOf = (pid, correlationId, scheduler, scheduledFor) => {
    const key = `${pid} ${correlationId}`;
    let run = runs.get(key);
    if (run === undefined) {
      run = { key, pid: Number(pid), scheduler, scheduledFor };
      runs.set(key, run);
    }
    return run;
  };
  for (const line of lines(marksFile)) {
    const [kind, pid, correlationId, scheduler, scheduledFor, at, how] = line.split(' ');
    if (!/^\d+$/.test(at ?? '') || (kind !== 'S' && kind !== 'E') || (kind === 'E' && how === undefined)) {
      torn++;
      continue;
    }
    const run = runOf(pid, correlationId, scheduler, scheduledFor);
    if (kind === 'S') run.startUs = Number(at);
    else {
      run.endUs = Number(at);
      run.how = how;
    }
  }
  let unidentified = 0;
  for (const line of lines(witnessFile)) {
    const [, closed, , pid, correlationId, scheduler, scheduledFor] = line.split(' ');
    if (scheduledFor === undefined) {
      unidentified++; // died between connecting and sending its id
      continue;
    }
    const run = runOf(pid, correlationId, scheduler, scheduledFor);
    run.closedUs = Math.min(run.closedUs ?? Number.POSITIVE_INFINITY, Number(closed));
  }
  const orphans = [];
  for (const { id } of open) {
    const [pid, correlationId, scheduler, scheduledFor] = id.split(' ');
    if (scheduledFor === undefined) {
      orphans.push({ pid: Number(pid), scheduler: '?', scheduledFor: '?' });
      continue;
    }
    const run = runOf(pid, correlationId, scheduler, scheduledFor);
    run.orphan = true;
    orphans.push(run);
  }

  const result = {
    started: [],
    endWithoutStart: 0,
    torn,
    unidentified,
    overlaps: [],
    duplicates: [],
    orphans,
  };
  const bySchedulers = new Map();
  const occurrences = new Map();
  for (const run of runs.values()) {
    if (run.startUs === undefined) {
      if (run.endUs !== undefined) result.endWithoutStart++;
      continue;
    }
    result.started.push(run);
    // An orphan may have a close too: the soak killed it after the stop.
    run.end =
      run.how === 'exit'
        ? 'exited'
        : run.how === 'term'
          ? 'terminated'
          : run.orphan
            ? 'orphan'
            : run.closedUs !== undefined
              ? 'killed'
              : 'unknown';
    run.lastUs = run.endUs ?? run.closedUs ?? Number.POSITIVE_INFINITY;
    const list = bySchedulers.get(run.scheduler) ?? [];
    list.push(run);
    bySchedulers.set(run.scheduler, list);
    const occurrence = `${run.scheduler} ${run.scheduledFor}`;
    occurrences.set(occurrence, (occurrences.get(occurrence) ?? 0) + 1);
  }
  for (const [scheduler, list] of bySchedulers) {
    list.sort((a, b) => a.startUs - b.startUs);
    let alive; // the run of the longest life so far
    for (const run of list) {
      if (alive !== undefined && run.startUs < alive.lastUs)
        result.overlaps.push({
          scheduler,
          run,
          previous: alive,
          ms: (Math.min(alive.lastUs, run.lastUs) - run.startUs) / 1000,
        });
      if (alive === undefined || run.lastUs > alive.lastUs) alive = run;
    }
  }
  for (const [occurrence, count] of occurrences) {
    if (count < 2) continue;
    const [scheduler, scheduledFor] = occurrence.split(' ');
    result.duplicates.push({ scheduler, scheduledFor, count });
  }
  result.overlaps.sort((a, b) => a.run.startUs - b.run.startUs);
  return result;
}

/**
 * The counts of the report for the runs of the schedulers `names` (a Set; all when undefined):
 * `{ started, exited, terminated, killed, orphans, unknown, overlaps, duplicates }`.
 */
export function marksOf(account, names) {
  const mine = (scheduler) => names === undefined || names.has(scheduler);
  const counts = { started: 0, exited: 0, terminated: 0, killed: 0, orphan: 0, unknown: 0 };
  for (const run of account.started) {
    if (!mine(run.scheduler)) continue;
    counts.started++;
    counts[run.end]++;
  }
  return {
    started: counts.started,
    exited: counts.exited,
    terminated: counts.terminated,
    killed: counts.killed,
    orphans: account.orphans.filter((o) => mine(o.scheduler)).length,
    unknown: counts.unknown,
    overlaps: account.overlaps.filter((o) => mine(o.scheduler)).length,
    duplicates: account.duplicates.filter((d) => mine(d.scheduler)).length,
  };
}

/** How a run ended, for the report's examples. */
export function describeEnd(run) {
  if (run.how === 'exit') return `ended ${iso(run.endUs)}`;
  if (run.how === 'term') return `ended on SIGTERM ${iso(run.endUs)}`;
  if (run.orphan) return 'alive after the stop';
  return run.closedUs === undefined ? 'end unknown' : `killed, gone by ${iso(run.closedUs)}`;
}

export const iso = (us) => new Date(Math.floor(us / 1000)).toISOString();

function lines(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line !== '');
}
