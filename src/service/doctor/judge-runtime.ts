import { isOverdue } from '../../decisions/overdue.js';
import { TAKEOVER_MARGIN_MS } from '../../fencing/lease.js';
import { loopSettings } from '../../runtime/worker-options.js';
import { formatInstant } from '../../time/instant.js';
import type { ClockFacts, RuntimeFacts, WorkerFacts } from './facts.js';
import { type Finding, finding, span } from './finding.js';

/**
 * The judges of a running Ursa (issue #26 item 4): the clock against the database's, a SQLite
 * store's serving process, the workers and their leases, overdue schedulers. Pure: facts and an
 * explicit instant `now` (UTC ms) in, findings out.
 */

/**
 * How recent a worker's heartbeat must be for it to count as live, ms: the default lease and the
 * takeover margin, as a reap and `ursa store copy` count it (decisions §5).
 */
export const LIVE_WITHIN_MS = loopSettings({}).leaseTtlMs + TAKEOVER_MARGIN_MS;

/** Whether `worker` renewed its lease within {@link LIVE_WITHIN_MS} of `now`. */
export function isLive(worker: Pick<WorkerFacts, 'heartbeatAt'>, now: number): boolean {
  return worker.heartbeatAt >= now - LIVE_WITHIN_MS;
}

const START_A_WORKER = 'start one: ursa serve (with the REST API) or ursa worker';

/**
 * This machine's clock against the database's: the skew beyond the query's own uncertainty (half
 * its round trip). Beyond the misfire threshold an error (occurrences would be judged missed, or
 * run late); beyond the takeover margin a warning (workers on hosts whose clocks read apart may
 * take a live one for lost). SQLite has no server clock: info.
 */
export function judgeClock(clock: ClockFacts | null, misfireThresholdMs: number): Finding[] {
  if (clock === null) {
    return [
      finding(
        'clock',
        'info',
        "SQLite has no server clock to compare with: the store's instants are this machine's clock; keep it synchronised (NTP)",
      ),
    ];
  }
  const middle = (clock.localBefore + clock.localAfter) / 2;
  const uncertainty = (clock.localAfter - clock.localBefore) / 2;
  const skew = middle - clock.database;
  const beyond = Math.max(0, Math.abs(skew) - uncertainty);
  const reads = `this machine's clock reads ${span(skew)} ${skew >= 0 ? 'ahead of' : 'behind'} the database server's`;
  const fix =
    'synchronise the clocks of this machine and the database server (NTP: chrony, systemd-timesyncd)';
  if (beyond > misfireThresholdMs) {
    return [
      finding(
        'clock',
        'error',
        `${reads}, more than the misfire threshold (${span(misfireThresholdMs)}): occurrences would be judged missed or fire late`,
        fix,
      ),
    ];
  }
  if (beyond > TAKEOVER_MARGIN_MS) {
    return [
      finding(
        'clock',
        'warning',
        `${reads}, more than the ${span(TAKEOVER_MARGIN_MS)} workers allow between their clocks: a live worker may be taken for lost`,
        fix,
      ),
    ];
  }
  return [
    finding(
      'clock',
      'ok',
      `this machine's clock is within ${span(Math.max(beyond, 1))} of the database server's`,
    ),
  ];
}

function describeWorker(w: WorkerFacts, now: number): string {
  return `worker ${w.id} (host ${w.host}, pid ${w.pid}, lease renewed ${formatInstant(w.heartbeatAt)}, ${span(now - w.heartbeatAt)} ago)`;
}

/**
 * A SQLite store serves one process (decisions §5): more than one live worker on it is an error;
 * the recorded serving process is named as info.
 */
export function judgeServing(runtime: RuntimeFacts, now: number): Finding[] {
  if (runtime.holder === undefined) return [];
  const live = runtime.workers.filter((w) => isLive(w, now));
  if (live.length > 1) {
    return [
      finding(
        'serving',
        'error',
        `${live.length} processes hold live leases on this SQLite store, which serves one: ${live.map((w) => describeWorker(w, now)).join('; ')}`,
        'stop all but one; for several workers move the store to PostgreSQL (ursa store copy)',
      ),
    ];
  }
  const holder = runtime.holder;
  if (holder === null || holder.stoppedAt !== null || !isLive(holder, now)) {
    return [
      finding('serving', 'ok', 'no process serves this SQLite store now: one ursa serve or ursa worker may'),
    ];
  }
  return [
    finding(
      'serving',
      'info',
      `served by ${describeWorker({ id: holder.workerId, host: holder.host, pid: holder.pid, heartbeatAt: holder.heartbeatAt }, now)}; a second ursa serve or ursa worker on it is refused`,
    ),
  ];
}

/**
 * The workers: none live is a warning (nothing fires); a worker not stopped whose lease lapsed
 * (it died or stalled) and runs held by such workers are warnings while no live worker will take
 * them over, info otherwise.
 */
export function judgeWorkers(runtime: RuntimeFacts, now: number): Finding[] {
  const live = runtime.workers.filter((w) => isLive(w, now));
  const lapsed = runtime.workers.filter((w) => !isLive(w, now));
  const out: Finding[] = [];
  if (live.length === 0) {
    out.push(
      finding(
        'workers',
        'warning',
        'no worker is running: no scheduler fires until one runs',
        START_A_WORKER,
      ),
    );
  } else {
    out.push(
      finding(
        'workers',
        'ok',
        `${live.length} worker${live.length === 1 ? '' : 's'} live: ${live.map((w) => describeWorker(w, now)).join('; ')}`,
      ),
    );
  }
  const severity = live.length === 0 ? 'warning' : 'info';
  for (const w of lapsed) {
    out.push(
      finding(
        'workers',
        severity,
        `${describeWorker(w, now)} was not stopped and its lease lapsed: it died or stalled`,
        live.length === 0
          ? `${START_A_WORKER}; it ends or adopts the runs that worker held`
          : 'nothing to do: a live worker takes its runs over at its next reap',
      ),
    );
  }
  if (runtime.runsOfLostWorkers > 0) {
    const n = runtime.runsOfLostWorkers;
    out.push(
      finding(
        'workers',
        severity,
        `${n} run${n === 1 ? ' is' : 's are'} held by workers that are no longer live; they end as worker-lost, or are adopted, when a live worker reaps them`,
        live.length === 0 ? START_A_WORKER : 'nothing to do: a live worker reaps them within seconds',
      ),
    );
  }
  return out;
}

/** How many overdue schedulers a report names one by one. */
const NAMED = 10;

/**
 * Schedulers whose next run is past by more than the misfire threshold: overdue while no worker
 * holds a live lease (nothing will start them, as `ursa list` marks them), a warning; late while
 * one does (the workers are stuck, overloaded or their clocks behind), an error.
 */
export function judgeOverdue(runtime: RuntimeFacts, now: number, misfireThresholdMs: number): Finding[] {
  const workerLive = runtime.workers.some((w) => isLive(w, now));
  const due = runtime.due.filter((d) => d.nextRunAt < now - misfireThresholdMs);
  if (due.length === 0) {
    return [
      finding(
        'overdue',
        'ok',
        `no scheduler's next run is past by more than the misfire threshold (${span(misfireThresholdMs)})`,
      ),
    ];
  }
  const more = runtime.dueCount - Math.min(due.length, NAMED);
  const names = due
    .slice(0, NAMED)
    .map(
      (d) =>
        `${d.tenant}/${d.project}/${d.name} (next run ${formatInstant(d.nextRunAt)}, ${span(now - d.nextRunAt)} ago)`,
    )
    .join('; ');
  const list = `${names}${more > 0 ? `; and ${more} more` : ''}`;
  if (due.every((d) => isOverdue(d.nextRunAt, now, workerLive, misfireThresholdMs))) {
    return [
      finding(
        'overdue',
        'warning',
        `${runtime.dueCount} scheduler${runtime.dueCount === 1 ? ' is' : 's are'} overdue, as no worker is running: ${list}`,
        START_A_WORKER,
      ),
    ];
  }
  return [
    finding(
      'overdue',
      'error',
      `${runtime.dueCount} scheduler${runtime.dueCount === 1 ? "'s next run is" : "s' next runs are"} late by more than the misfire threshold while a worker is live: ${list}`,
      "look at the workers' logs (a stalled loop, a store that does not answer, a clock set back) and restart them",
    ),
  ];
}
