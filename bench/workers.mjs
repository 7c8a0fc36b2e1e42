import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { positive, positives, stores, usageError } from './lib/args.mjs';
import { median } from './lib/measure.mjs';
import { loadLine, storeLines } from './lib/report.mjs';
import { ursaSource } from './lib/setup.mjs';
import { formatCount, formatTable } from './lib/table.mjs';
import { postgresServer } from './workers/postgres.mjs';
import { killWorkers, readLogs, snapshotDist, startWorkers, stopWorkers } from './workers/processes.mjs';
import {
  claimedBetween,
  dueAt,
  endReasons,
  firstClaim,
  open,
  release,
  runsBetween,
  seed,
  setAllNextRunAt,
  sqliteVersion,
  startedBetween,
  waitingFor,
  workerRows,
  writeSchedulerFolder,
} from './workers/store.mjs';
import { DRAIN_TIMEOUT_MS, drain, until, waitReady } from './workers/wait.mjs';

/**
 * Scenario `workers`: fire lateness and claims per second of real `ursa worker` processes with
 * 10,000 schedulers — 1, 2 and 4 workers on PostgreSQL, one on SQLite (it allows one process).
 *
 * Per configuration: a fresh database seeded through Ursa's `applyDirectory`. The schedulers are
 * parked (their next occurrence moved a day ahead) while the workers start, since each worker's
 * start re-validates every document; once every worker renews its lease after that start-up:
 * - capacity: every scheduler is made due at one instant a second ago, and the claims are timed
 *   (until all are claimed, or `--capacity-seconds` after the first claim), `--rounds` times;
 * - steady load: the schedulers are released to their next occurrence; after a warm-up, one
 *   fixed window is measured from the store: lateness = started_at (claimed_at) − scheduled_for
 *   of every occurrence in the window.
 * It asserts nothing: the targets are printed as a column.
 */

const DEFAULTS = {
  schedulers: 10_000,
  seconds: 30,
  warmup: 5,
  rounds: 3,
  capacitySeconds: 5,
  workers: [1, 2, 4],
};
const TARGET_P99_MS = { postgresql: 25, sqlite: 5 };
const PARK_MS = 86_400_000;
const SETTLE_TIMEOUT_MS = 5_000;
const WAKE_TIMEOUT_MS = 30_000;

function parseArgs(args) {
  const options = { ...DEFAULTS, stores: ['postgresql', 'sqlite'], trace: false };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (flag === '--trace' && value === undefined) options.trace = true;
    else if (value === undefined) throw usageError(`${arg}: expected ${flag}=<value>`);
    else if (flag === '--seconds') options.seconds = positive(arg, value);
    else if (flag === '--warmup') options.warmup = positive(arg, value);
    else if (flag === '--rounds') options.rounds = positive(arg, value);
    else if (flag === '--capacity-seconds') options.capacitySeconds = positive(arg, value);
    else if (flag === '--schedulers') options.schedulers = positive(arg, value);
    else if (flag === '--workers') options.workers = positives(arg, value);
    else if (flag === '--stores') options.stores = stores(arg, value);
    else throw usageError(`unknown option ${arg}`);
  }
  return options;
}

/**
 * p50, p99 (nearest rank) and max of `samples` ({ ms, bound }), where `bound` marks a lower bound
 * (an occurrence not claimed or started when the window was read). A percentile is a lower bound
 * itself (`bound`, printed `>=`) when any bound sample ranks at or below it: its true value may
 * be larger and overtake it.
 */
function distribution(samples) {
  const sorted = [...samples].sort((a, b) => a.ms - b.ms);
  if (sorted.length === 0) return { count: 0, p50: null, p99: null, max: null };
  const at = (rank) => {
    const k = Math.min(sorted.length - 1, Math.max(0, rank));
    return { ms: sorted[k].ms, bound: sorted.slice(0, k + 1).some((s) => s.bound) };
  };
  const nearest = (q) => at(Math.ceil(q * sorted.length) - 1);
  return { count: sorted.length, p50: nearest(0.5), p99: nearest(0.99), max: at(sorted.length - 1) };
}

/**
 * One capacity round: everything parked and drained, then every scheduler due at one instant a
 * second ago; claims timed from the first claiming tick until all are claimed or `capSeconds`
 * passed; then everything parked again and drained.
 */
async function capacityRound(store, workers, { schedulers, capacitySeconds }) {
  await setAllNextRunAt(store, Date.now() + PARK_MS);
  const before = await drain(store, workers);
  const at = Date.now() - 1000;
  await setAllNextRunAt(store, at);
  const released = Date.now();
  await store.notifyChange();
  let first = null;
  let stopAt = null;
  let waiting = schedulers;
  const ended = await until(
    async () => {
      waiting = await waitingFor(store, at);
      stopAt = Date.now();
      if (first === null && waiting < schedulers) first = await firstClaim(store, at);
      if (first === null) return stopAt - released >= WAKE_TIMEOUT_MS;
      return waiting === 0 || stopAt >= first + capacitySeconds * 1000;
    },
    { everyMs: 20, timeoutMs: WAKE_TIMEOUT_MS + capacitySeconds * 1000, workers },
  );
  await setAllNextRunAt(store, Date.now() + PARK_MS);
  const after = await drain(store, workers);
  const runs = await runsBetween(store, at, at + 1);
  const starts = runs.filter((r) => r.startedAt !== null).map((r) => r.startedAt);
  const claimed = schedulers - waiting;
  const claimSeconds = first === null ? null : (stopAt - first) / 1000;
  const startSeconds = first === null || starts.length === 0 ? null : (Math.max(...starts) - first) / 1000;
  return {
    claimed,
    allClaimed: waiting === 0,
    ended,
    runs: runs.length,
    started: starts.length,
    coalesced: runs.filter((r) => r.coalesced).length,
    wakeMs: first === null ? null : first - released,
    claimSeconds,
    claimsPerSecond: claimSeconds === null ? null : claimed / claimSeconds,
    startSeconds,
    startsPerSecond: startSeconds === null ? null : starts.length / startSeconds,
    drained: before.drained && after.drained,
    stuck: Math.max(before.stuck, after.stuck),
    window: { from: released, to: stopAt ?? Date.now() },
  };
}

/** The steady phase: schedulers released, warm-up, one window of `seconds`, lateness from the store. */
async function steadyPhase(store, workers, options, onProgress) {
  const { schedulers, seconds, warmup } = options;
  const base = Math.ceil((Date.now() + 1500) / 1000) * 1000;
  await release(store, base, schedulers);
  const from = base + warmup * 1000;
  const to = from + seconds * 1000;
  const expectedAt = new Map();
  for (let t = from; t < to; t += 1000) expectedAt.set(t, dueAt(t, schedulers));
  const expected = [...expectedAt.values()].reduce((a, b) => a + b, 0);
  onProgress(`released at ${new Date(base).toISOString()}; warm-up ${warmup} s, then ${seconds} s measured`);
  await until(() => Date.now() >= to, { everyMs: 250, timeoutMs: to - Date.now() + 1000, workers });
  const settled = await until(async () => (await startedBetween(store, from, to)) >= expected, {
    everyMs: 250,
    timeoutMs: SETTLE_TIMEOUT_MS,
    workers,
  });
  const readAt = Date.now();
  const runs = await runsBetween(store, from, to);
  const claims = await claimedBetween(store, from, to);
  // Occurrences not claimed, or not started, when the window was read count with a lower bound.
  const claim = runs.map((r) => ({ ms: r.claimedAt - r.scheduledFor, bound: false }));
  const start = runs.map((r) =>
    r.startedAt === null
      ? { ms: readAt - r.scheduledFor, bound: true }
      : { ms: r.startedAt - r.scheduledFor, bound: false },
  );
  const perSecond = new Map();
  for (const r of runs) perSecond.set(r.scheduledFor, (perSecond.get(r.scheduledFor) ?? 0) + 1);
  for (const [t, n] of expectedAt) {
    for (let k = perSecond.get(t) ?? 0; k < n; k++) {
      claim.push({ ms: readAt - t, bound: true });
      start.push({ ms: readAt - t, bound: true });
    }
  }
  const perWorker = {};
  for (const run of runs) perWorker[run.workerId] = (perWorker[run.workerId] ?? 0) + 1;
  const started = runs.filter((r) => r.startedAt !== null);
  return {
    window: { from, to, seconds },
    expected,
    runs: runs.length,
    started: started.length,
    coalesced: runs.filter((r) => r.coalesced).length,
    settled,
    offeredPerSecond: expected / seconds,
    claimsPerSecond: claims / seconds,
    claimLatenessMs: distribution(claim),
    startLatenessMs: distribution(start),
    claimToStartMs: distribution(started.map((r) => ({ ms: r.startedAt - r.claimedAt, bound: false }))),
    runsPerWorker: Object.values(perWorker).sort((a, b) => b - a),
  };
}

/** One configuration: a store with the seeded schedulers, `count` worker processes. */
async function runConfiguration({ store: storeName, location, count, dir, main, options, onProgress }) {
  const label = `${storeName}, ${count} worker${count === 1 ? '' : 's'}`;
  const store = await open(location);
  let workers;
  try {
    await setAllNextRunAt(store, Date.now() + PARK_MS);
    onProgress(`${label}: starting the workers`);
    workers = startWorkers({ main, count, location, dir, logLevel: options.trace ? 'info' : 'warn' });
    const startupSeconds = await waitReady(store, workers);
    onProgress(`${label}: workers ready after ${startupSeconds.map((s) => s.toFixed(1)).join(', ')} s`);
    // Capacity first: the schedulers it fires get their system session then, as the schedulers of
    // a long-running store have, rather than in the steady window.
    const rounds = [];
    for (let round = 1; round <= options.rounds; round++) {
      const r = await capacityRound(store, workers, options);
      rounds.push(r);
      onProgress(
        `${label}: capacity round ${round}/${options.rounds}: ${r.claimed} claimed in ${r.claimSeconds?.toFixed(1)} s`,
      );
    }
    const steady = await steadyPhase(store, workers, options, (m) => onProgress(`${label}: ${m}`));
    onProgress(
      `${label}: start lateness p99 ${steady.startLatenessMs.p99?.ms} ms, ${steady.claimsPerSecond.toFixed(0)} claims/s`,
    );
    const retiredWhileAlive = (
      await workerRows(
        store,
        workers.map((w) => w.pid),
      )
    ).filter((row) => row.stoppedAt !== null).length;
    onProgress(`${label}: stopping the workers`);
    const stops = await stopWorkers(workers);
    // Tick lines of the steady window only: a capacity round ends by parking what is left, which
    // fails the compare-and-swap of every claim then in progress.
    const logs = readLogs(workers, [{ name: 'steady', from: steady.window.from, to: steady.window.to }]);
    return {
      store: storeName,
      workers: count,
      startupSeconds,
      steady,
      capacity: {
        rounds,
        claimsPerSecond: median(rounds.map((r) => r.claimsPerSecond ?? 0)),
        startsPerSecond: median(rounds.map((r) => r.startsPerSecond ?? 0)),
      },
      health: {
        retiredWhileAlive,
        endReasons: await endReasons(store),
        stopSeconds: stops.map((s) => s.seconds),
        killed: stops.filter((s) => s.signal === 'SIGKILL').length,
        problems: logs.problems,
      },
      ticks: options.trace ? logs.ticks : undefined,
    };
  } catch (error) {
    // One configuration failing (a worker refused its store, say) leaves the others' figures.
    onProgress(`${label}: failed: ${error.message}`);
    return { store: storeName, workers: count, error: error.message };
  } finally {
    killWorkers(workers);
    await store.close();
  }
}

export async function run(args, { onProgress = () => {} } = {}) {
  const options = parseArgs(args);
  const started = performance.now();
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-workers-'));
  const dist = snapshotDist();
  const configurations = [];
  const report = { scenario: 'workers', options, ursa: ursaSource(), seedSeconds: {}, configurations };
  let server;
  const databases = [];
  try {
    onProgress(`writing ${options.schedulers} scheduler documents`);
    const folder = writeSchedulerFolder(join(dir, 'project'), options.schedulers);
    const common = { dir, main: dist.main, options, onProgress };
    if (options.stores.includes('postgresql')) {
      server = await postgresServer(onProgress);
      report.postgres = { version: server.version, source: server.source, settings: server.settings };
      // Seeded once through applyDirectory; each configuration gets a copy (CREATE DATABASE … TEMPLATE).
      const template = await server.createDatabase();
      databases.push(template);
      onProgress(`seeding PostgreSQL (applyDirectory, ${options.schedulers} documents)`);
      report.seedSeconds.postgresql = await seed(template.url, folder, options.schedulers);
      onProgress(`seeded in ${report.seedSeconds.postgresql.toFixed(1)} s`);
      for (const count of options.workers) {
        const database = await server.createDatabase(template);
        databases.push(database);
        configurations.push(
          await runConfiguration({ ...common, store: 'postgresql', location: database.url, count }),
        );
        await server.dropDatabase(database);
      }
    }
    if (options.stores.includes('sqlite')) {
      const file = join(dir, 'sqlite', 'ursa.db');
      report.sqlite = { version: sqliteVersion() };
      onProgress(`seeding SQLite (applyDirectory, ${options.schedulers} documents)`);
      report.seedSeconds.sqlite = await seed(file, folder, options.schedulers);
      onProgress(`seeded in ${report.seedSeconds.sqlite.toFixed(1)} s`);
      configurations.push(await runConfiguration({ ...common, store: 'sqlite', location: file, count: 1 }));
    }
  } finally {
    for (const database of databases) await server?.dropDatabase(database).catch(() => {});
    await server?.stop();
    dist.remove();
    rmSync(dir, { recursive: true, force: true });
  }
  report.loadAverage = { before: loadBefore, after: loadavg() };
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

const fixed = (value, digits = 1) =>
  value === null || !Number.isFinite(value) ? '-' : value.toFixed(digits);
const count = (value) => (value === null || !Number.isFinite(value) ? '-' : formatCount(value));
/** A lateness sample as a cell: whole ms, `>=` when it is a lower bound (not started when read). */
const late = (sample) => (sample === null ? '-' : `${sample.bound ? '>=' : ''}${Math.round(sample.ms)}`);

function steadyTable(configs) {
  const headers = [
    'store',
    'workers',
    'start-up s',
    'offered/s',
    'claims/s',
    'claim late p50',
    'p99',
    'max',
    'start late p50',
    'p99',
    'max',
    'target p99',
    'met',
  ];
  const rows = configs.map((c) => {
    const head = [c.store, String(c.workers)];
    if (c.error !== undefined) return [...head, ...headers.slice(2).map(() => '-')];
    const s = c.steady;
    const target = TARGET_P99_MS[c.store];
    const p99 = s.startLatenessMs.p99;
    return [
      ...head,
      fixed(Math.max(...c.startupSeconds)),
      fixed(s.offeredPerSecond),
      fixed(s.claimsPerSecond),
      late(s.claimLatenessMs.p50),
      late(s.claimLatenessMs.p99),
      late(s.claimLatenessMs.max),
      late(s.startLatenessMs.p50),
      late(p99),
      late(s.startLatenessMs.max),
      `< ${target} ms`,
      p99 !== null && !p99.bound && p99.ms < target ? 'yes' : 'no',
    ];
  });
  return formatTable(headers, rows, { textColumns: 1 });
}

function capacityTable(configs, options) {
  const headers = ['store', 'workers', 'claims/s', 'starts/s', 'claimed per round', 'claims/s per round'];
  const rows = configs.map((c) => {
    const head = [c.store, String(c.workers)];
    if (c.error !== undefined) return [...head, '-', '-', '-', '-'];
    const { rounds } = c.capacity;
    return [
      ...head,
      count(c.capacity.claimsPerSecond),
      count(c.capacity.startsPerSecond),
      rounds.map((r) => `${r.claimed}${r.allClaimed ? '' : '+'}`).join(' '),
      rounds.map((r) => count(r.claimsPerSecond)).join(' '),
    ];
  });
  return [
    `capacity: all ${formatCount(options.schedulers)} made due at one instant (coalesced catch-ups; warm ` +
      `workers), claims timed until all are claimed or for ${options.capacitySeconds} s after the first; ` +
      `median of ${options.rounds} round${options.rounds === 1 ? '' : 's'}`,
    formatTable(headers, rows, { textColumns: 1 }),
  ].join('\n');
}

function traceTable(configs) {
  const rows = configs
    .filter((c) => c.ticks !== undefined)
    .flatMap((c) =>
      Object.entries(c.ticks).map(([phase, t]) => [
        c.store,
        String(c.workers),
        phase,
        String(t.ticks),
        String(t.due),
        String(t.claimed),
        String(t.due - t.claimed),
      ]),
    );
  return [
    '--trace: workers logged at info (slower: the figures above are not comparable); their tick lines ' +
      'ending in the steady window summed: due = claims attempted, claimed = won, the rest lost the ' +
      'compare-and-swap to another worker',
    formatTable(['store', 'workers', 'phase', 'ticks', 'attempted', 'won', 'lost'], rows, { textColumns: 3 }),
  ].join('\n');
}

function healthLine(c) {
  const label = `- ${c.store}, ${c.workers} worker${c.workers === 1 ? '' : 's'}: `;
  if (c.error !== undefined) return `${label}FAILED: ${c.error}`;
  const s = c.steady;
  const notes = [];
  const unstarted = s.expected - s.started;
  if (unstarted > 0)
    notes.push(
      `${unstarted} of ${s.expected} window occurrences not started ${SETTLE_TIMEOUT_MS / 1000} s after it ` +
        '(their lateness counts as a lower bound, >=)',
    );
  if (s.coalesced > 0) notes.push(`${s.coalesced} window runs coalesced`);
  if (c.health.retiredWhileAlive > 0)
    notes.push(`${c.health.retiredWhileAlive} live worker(s) marked stopped by a peer (lease lapsed)`);
  for (const r of c.health.endReasons)
    notes.push(`${r.count} run(s) ${r.outcome} (${r.reason ?? 'no reason'})`);
  for (const [i, r] of c.capacity.rounds.entries()) {
    if (r.stuck > 0) notes.push(`capacity round ${i + 1}: ${r.stuck} run(s) stuck unfinished`);
    else if (!r.drained)
      notes.push(`capacity round ${i + 1}: backlog not drained in ${DRAIN_TIMEOUT_MS / 1000} s`);
  }
  if (c.health.killed > 0) notes.push(`${c.health.killed} worker(s) killed after the stop timeout`);
  for (const p of c.health.problems) notes.push(`${p.count}x ${p.message}`);
  return `${label}${notes.length === 0 ? 'ok' : notes.join('; ')}`;
}

export function format(report) {
  const { options } = report;
  const configs = report.configurations;
  const perSecond = Math.round(options.schedulers / 60);
  const lines = [
    `workers: ${formatCount(options.schedulers)} schedulers (recipe noop) in one project; scheduler i fires ` +
      `once a minute at second i % 60, so ~${perSecond} occurrences fall due together at every whole second ` +
      `(offered load ~${perSecond}/s)`,
    `Ursa: dist/ built from the ${report.ursa}; workers: node dist/cli/main.js worker --db <store>, ` +
      'log level warn (--trace: info)',
  ];
  lines.push(...storeLines(report));
  const seeded = Object.entries(report.seedSeconds).map(([store, s]) => `${store} ${s.toFixed(1)} s`);
  lines.push(
    `seeding ${formatCount(options.schedulers)} documents with applyDirectory (each validated, then a ` +
      `refresh): ${seeded.join(', ')}${report.postgres === undefined ? '' : ' (PostgreSQL once; each configuration gets a copy)'}`,
    loadLine(report),
    '',
    `steady load: every occurrence of one ${options.seconds} s window, after a ${options.warmup} s warm-up (ms)`,
    steadyTable(configs),
    '',
    capacityTable(configs, options),
  );
  if (options.trace) lines.push('', traceTable(configs));
  lines.push(
    '',
    'health (anything but "ok" means the figures above include it):',
    ...configs.map(healthLine),
  );
  lines.push(
    '',
    '- start late = runs.started_at − scheduled_for: started_at is the clock reading just before the run’s ' +
      'engine is called (after the transaction that starts it committed); claim late = runs.claimed_at − ' +
      'scheduled_for, where claimed_at is the clock reading of the tick that claimed the run: negative when it ' +
      'was claimed ahead of its instant (the worker’s fire-ahead window, 500 ms)',
    '- p50/p99/max: nearest rank over every occurrence of the window; >= marks a lower bound (some ' +
      `occurrences were not yet claimed or started when the window was read, up to ${SETTLE_TIMEOUT_MS / 1000} s ` +
      'after its end); claims/s: runs whose claimed_at is in the window ÷ its length',
    '- start-up: spawned → first lease renewal after the worker’s start-up (a refresh of every project, ' +
      'which validates every document); the schedulers are parked meanwhile, so no backlog builds up',
    '- capacity: claims/s = runs claimed ÷ time from the first claiming tick’s start (polled every 20 ms); ' +
      'starts/s the same up to the last started_at; "+": the round ended before all were claimed',
    '- targets (issue): p99 start lateness under 25 ms on PostgreSQL, under 5 ms on SQLite; shown, not asserted',
  );
  if (report.sqlite !== undefined) {
    lines.push(
      '- SQLite: the benchmark parks and releases schedulers by writing schedule_state from its own ' +
        'process; a worker transaction waits for such a write (busy timeout 5 s)',
    );
  }
  return lines.join('\n');
}
