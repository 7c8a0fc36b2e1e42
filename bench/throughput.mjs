import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { positive, positives, stores, usageError } from './lib/args.mjs';
import { cpuMeter, perUnit } from './lib/cpu.mjs';
import { median } from './lib/measure.mjs';
import { loadLine, storeLines } from './lib/report.mjs';
import { ursaSource } from './lib/setup.mjs';
import { formatCount, formatTable } from './lib/table.mjs';
import { versionOf } from './peers/versions.mjs';
import { graphileThroughput } from './throughput/graphile.mjs';
import { postgresServer } from './workers/postgres.mjs';
import { killWorkers, readLogs, snapshotDist, startWorkers, stopWorkers } from './workers/processes.mjs';
import {
  claimedBetween,
  endedBetween,
  endReasons,
  open,
  seed,
  setAllNextRunAt,
  sqliteVersion,
  waitingFor,
  walBytesBetween,
  walPosition,
  writeSchedulerFolder,
} from './workers/store.mjs';
import { DRAIN_TIMEOUT_MS, drain, until, waitReady } from './workers/wait.mjs';

/**
 * Scenario `throughput`: sustained runs per second of real `ursa worker` processes, end to end —
 * claimed, started, the noop engine called, ended, with their START and END feed lines and run
 * logs written — on SQLite (one worker) and PostgreSQL (1, 2, 4 workers); beside it,
 * graphile-worker's no-op jobs per second on the same PostgreSQL server, for reference.
 *
 * Ursa: `--schedulers` schedulers firing every second (`* * * * * *`) offer more occurrences than
 * the workers can take; a scheduler that fell behind runs once (coalesced), so the workers stay
 * saturated and nothing piles up. Per configuration: a fresh store seeded with `applyDirectory`,
 * the schedulers parked while the workers start; then every scheduler fires once, untimed (its
 * system session is created then, as in a store that has been running). Each round releases
 * them, waits `--warmup` seconds and measures one `--seconds` window from the store: runs ended
 * in it (state ended, ended_at in the window), each checked for its END line and final run log,
 * and runs claimed in it; then parks the schedulers and lets the workers drain.
 * It asserts nothing: the target is printed as a column.
 */

const DEFAULTS = { schedulers: 5_000, seconds: 20, warmup: 5, rounds: 3, jobs: 400_000, workers: [1, 2, 4] };
const SYSTEMS = ['ursa', 'graphile-worker'];
const TARGET_RUNS_PER_SECOND = { sqlite: 2_000 };
const PARK_MS = 86_400_000;
const PRIME_TIMEOUT_MS = 120_000;

function parseArgs(args) {
  const options = { ...DEFAULTS, stores: ['postgresql', 'sqlite'], systems: [...SYSTEMS] };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (value === undefined) throw usageError(`${arg}: expected ${flag}=<value>`);
    else if (flag === '--seconds') options.seconds = positive(arg, value);
    else if (flag === '--warmup') options.warmup = positive(arg, value);
    else if (flag === '--rounds') options.rounds = positive(arg, value);
    else if (flag === '--schedulers') options.schedulers = positive(arg, value);
    else if (flag === '--jobs') options.jobs = positive(arg, value);
    else if (flag === '--workers') options.workers = positives(arg, value);
    else if (flag === '--stores') options.stores = stores(arg, value);
    else if (flag === '--systems') {
      options.systems = value.split(',');
      const unknown = options.systems.find((s) => !SYSTEMS.includes(s));
      if (unknown !== undefined) throw usageError(`${arg}: systems are ${SYSTEMS.join(', ')}`);
    } else throw usageError(`unknown option ${arg}`);
  }
  return options;
}

/**
 * Every scheduler fires once, untimed: all made due a second ago, until each has been claimed;
 * then parked again and drained. Their system sessions exist afterwards.
 */
async function prime(store, workers, schedulers) {
  const at = Date.now() - 1000;
  await setAllNextRunAt(store, at);
  await store.notifyChange();
  const claimed = await until(async () => (await waitingFor(store, at)) === 0, {
    everyMs: 250,
    timeoutMs: PRIME_TIMEOUT_MS,
    workers,
  });
  await setAllNextRunAt(store, Date.now() + PARK_MS);
  const drained = await drain(store, workers);
  if (!claimed)
    throw new Error(`priming: not all ${schedulers} schedulers claimed in ${PRIME_TIMEOUT_MS / 1000} s`);
  return drained;
}

/** One round: released at the next whole second (+1.5 s), warm-up, one window, parked, drained. */
async function ursaRound(store, workers, { seconds, warmup }, postgres) {
  const base = Math.ceil((Date.now() + 1500) / 1000) * 1000;
  await setAllNextRunAt(store, base);
  await store.notifyChange();
  const from = base + warmup * 1000;
  const to = from + seconds * 1000;
  const meter = cpuMeter(
    workers.map((w) => w.pid),
    { postgres },
  );
  await until(() => Date.now() >= from, { everyMs: 10, timeoutMs: from - Date.now() + 1000, workers });
  meter.start();
  const walFrom = postgres ? await walPosition(store) : null;
  await until(() => Date.now() >= to, { everyMs: 10, timeoutMs: to - Date.now() + 1000, workers });
  const cpu = meter.stop();
  const walBytes = postgres ? await walBytesBetween(store, walFrom, await walPosition(store)) : null;
  await setAllNextRunAt(store, Date.now() + PARK_MS);
  const drained = await drain(store, workers);
  const ended = await endedBetween(store, from, to);
  const claims = await claimedBetween(store, from, to);
  return {
    window: { from, to },
    ...ended,
    claims,
    runsPerSecond: ended.runs / seconds,
    claimsPerSecond: claims / seconds,
    cpu: {
      workerMsPerRun: perUnit(cpu.processMs, ended.runs),
      postgresMsPerRun: perUnit(cpu.postgresMs, ended.runs),
    },
    walBytesPerRun: perUnit(walBytes, ended.runs),
    drained: drained.drained,
    stuck: drained.stuck,
  };
}

/** One Ursa configuration: a store with the seeded schedulers, `count` worker processes. */
async function ursaConfiguration({ store: storeName, location, count, dir, main, options, onProgress }) {
  const label = `Ursa ${storeName}, ${count} worker${count === 1 ? '' : 's'}`;
  const store = await open(location);
  let workers;
  try {
    await setAllNextRunAt(store, Date.now() + PARK_MS);
    onProgress(`${label}: starting the workers`);
    workers = startWorkers({ main, count, location, dir, logLevel: 'warn' });
    const startupSeconds = await waitReady(store, workers);
    onProgress(`${label}: workers ready after ${startupSeconds.map((s) => s.toFixed(1)).join(', ')} s`);
    const primed = await prime(store, workers, options.schedulers);
    const rounds = [];
    for (let round = 1; round <= options.rounds; round++) {
      const r = await ursaRound(store, workers, options, storeName === 'postgresql');
      rounds.push(r);
      onProgress(
        `${label}: round ${round}/${options.rounds}: ${r.runs} runs ended, ${r.claims} claimed in ` +
          `${options.seconds} s: ${r.runsPerSecond.toFixed(0)} runs/s`,
      );
    }
    onProgress(`${label}: stopping the workers`);
    const stops = await stopWorkers(workers);
    const logs = readLogs(workers);
    return {
      system: 'ursa',
      store: storeName,
      workers: count,
      startupSeconds,
      rounds,
      runsPerSecond: median(rounds.map((r) => r.runsPerSecond)),
      claimsPerSecond: median(rounds.map((r) => r.claimsPerSecond)),
      cpu: medianCpu(rounds),
      walBytesPerRun: medianOf(rounds.map((r) => r.walBytesPerRun)),
      health: {
        primed,
        endReasons: await endReasons(store),
        killed: stops.filter((s) => s.signal === 'SIGKILL').length,
        problems: logs.problems,
      },
    };
  } catch (error) {
    onProgress(`${label}: failed: ${error.message}`);
    return { system: 'ursa', store: storeName, workers: count, error: error.message };
  } finally {
    killWorkers(workers);
    await store.close();
  }
}

/** The median of the figures the rounds measured (null and undefined left out), or null. */
function medianOf(values) {
  const measured = values.filter((v) => v !== null && v !== undefined);
  return measured.length === 0 ? null : median(measured);
}

/** The median CPU cost per run (or job) over the rounds that measured it, ms; null where none did. */
function medianCpu(rounds) {
  const of = (key) => medianOf(rounds.map((r) => r.cpu?.[key]));
  return { workerMsPerRun: of('workerMsPerRun'), postgresMsPerRun: of('postgresMsPerRun') };
}

async function graphileConfiguration({ server, count, dir, options, onProgress }) {
  const label = `graphile-worker, ${count} process${count === 1 ? '' : 'es'}`;
  try {
    const rounds = await graphileThroughput({
      server,
      count,
      dir,
      options,
      onProgress: (m) => onProgress(`${label}: ${m}`),
    });
    return {
      system: 'graphile-worker',
      store: 'postgresql',
      workers: count,
      rounds,
      runsPerSecond: median(rounds.map((r) => r.jobsPerSecond)),
      cpu: medianCpu(rounds),
      walBytesPerRun: medianOf(rounds.map((r) => r.walBytesPerRun)),
    };
  } catch (error) {
    onProgress(`${label}: failed: ${error.message}`);
    return { system: 'graphile-worker', store: 'postgresql', workers: count, error: error.message };
  }
}

export async function run(args, { onProgress = () => {} } = {}) {
  const options = parseArgs(args);
  const started = performance.now();
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-throughput-'));
  const dist = snapshotDist();
  const configurations = [];
  const report = {
    scenario: 'throughput',
    options,
    ursa: ursaSource(),
    graphileWorker: versionOf('graphile-worker'),
    seedSeconds: {},
    configurations,
  };
  const ursa = options.systems.includes('ursa');
  const needsPostgres =
    options.systems.includes('graphile-worker') || (ursa && options.stores.includes('postgresql'));
  let server;
  const databases = [];
  try {
    const folder = join(dir, 'project');
    if (ursa) {
      onProgress(`writing ${options.schedulers} scheduler documents (every second)`);
      writeSchedulerFolder(folder, options.schedulers, { everySecond: true });
    }
    const common = { dir, main: dist.main, options, onProgress };
    if (needsPostgres) {
      server = await postgresServer(onProgress);
      report.postgres = { version: server.version, source: server.source, settings: server.settings };
    }
    if (ursa && options.stores.includes('postgresql')) {
      const template = await server.createDatabase();
      databases.push(template);
      onProgress(`seeding PostgreSQL (applyDirectory, ${options.schedulers} documents)`);
      report.seedSeconds.postgresql = await seed(template.url, folder, options.schedulers);
      for (const count of options.workers) {
        const database = await server.createDatabase(template);
        databases.push(database);
        configurations.push(
          await ursaConfiguration({ ...common, store: 'postgresql', location: database.url, count }),
        );
        await server.dropDatabase(database);
      }
    }
    if (ursa && options.stores.includes('sqlite')) {
      const file = join(dir, 'sqlite', 'ursa.db');
      report.sqlite = { version: sqliteVersion() };
      onProgress(`seeding SQLite (applyDirectory, ${options.schedulers} documents)`);
      report.seedSeconds.sqlite = await seed(file, folder, options.schedulers);
      configurations.push(await ursaConfiguration({ ...common, store: 'sqlite', location: file, count: 1 }));
    }
    if (options.systems.includes('graphile-worker')) {
      for (const count of options.workers) {
        configurations.push(await graphileConfiguration({ server, count, dir, options, onProgress }));
      }
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

const count = (value) =>
  value === null || value === undefined || !Number.isFinite(value) ? '-' : formatCount(value);
const cpuMs = (value) => (value === null || value === undefined ? '-' : value.toFixed(2));
const STORE = { sqlite: 'SQLite', postgresql: 'PostgreSQL' };

/** graphile-worker's figure to compare a row with: the same number of processes. */
function peerFor(configs, c) {
  return configs.find(
    (p) => p.system === 'graphile-worker' && p.workers === c.workers && p.error === undefined,
  );
}

function table(report) {
  const configs = report.configurations;
  const hasPeer = configs.some((c) => c.system === 'graphile-worker');
  const headers = [
    'system',
    'store',
    'workers',
    'runs/s',
    'claims/s',
    'runs/s per round',
    'CPU ms/run: workers',
    'PostgreSQL',
    'WAL/run',
    'target',
    ...(hasPeer ? ['Ursa ÷ graphile-worker'] : []),
  ];
  const rows = configs.map((c) => {
    const system = c.system === 'ursa' ? 'Ursa' : `graphile-worker ${report.graphileWorker}`;
    const head = [system, STORE[c.store], String(c.workers)];
    if (c.error !== undefined) return [...head, ...headers.slice(3).map(() => '-')];
    const target = TARGET_RUNS_PER_SECOND[c.store];
    const perRound = c.rounds
      .map((r) => `${count(r.runsPerSecond ?? r.jobsPerSecond)}${r.exhausted ? '+' : ''}`)
      .join(' ');
    const peer = c.system === 'ursa' ? peerFor(configs, c) : undefined;
    return [
      ...head,
      count(c.runsPerSecond),
      c.system === 'ursa' ? count(c.claimsPerSecond) : '-',
      perRound,
      cpuMs(c.cpu?.workerMsPerRun),
      c.store === 'postgresql' ? cpuMs(c.cpu?.postgresMsPerRun) : '',
      c.walBytesPerRun === null || c.walBytesPerRun === undefined ? '' : `${formatCount(c.walBytesPerRun)} B`,
      c.system === 'ursa' && target !== undefined
        ? `>= ${formatCount(target)} (${c.runsPerSecond >= target ? 'met' : 'not met'})`
        : '',
      ...(hasPeer ? [peer === undefined ? '–' : (c.runsPerSecond / peer.runsPerSecond).toFixed(2)] : []),
    ];
  });
  return formatTable(headers, rows, { textColumns: 2 });
}

function healthLine(c) {
  const ursa = c.system === 'ursa';
  const unit = ursa ? ['worker', 'workers'] : ['process', 'processes'];
  const label = `- ${ursa ? 'Ursa' : 'graphile-worker'} ${STORE[c.store]}, ${c.workers} ${unit[c.workers === 1 ? 0 : 1]}: `;
  if (c.error !== undefined) return `${label}FAILED: ${c.error}`;
  const notes = [];
  if (c.system === 'graphile-worker') {
    for (const [i, r] of c.rounds.entries()) {
      if (r.exhausted) notes.push(`round ${i + 1}: the queue ran dry within the window (a lower bound, +)`);
    }
    const adds = c.rounds
      .filter((r) => r.added > 0)
      .map((r) => `${formatCount(r.added)} in ${r.addSeconds.toFixed(1)} s`);
    notes.push(`jobs added before each round: ${adds.join(', ')}`);
    return `${label}${notes.join('; ')}`;
  }
  for (const [i, r] of c.rounds.entries()) {
    if (r.endLines < r.runs)
      notes.push(`round ${i + 1}: ${r.runs - r.endLines} ended run(s) without an END line`);
    if (r.runLogs < r.runs)
      notes.push(`round ${i + 1}: ${r.runs - r.runLogs} ended run(s) without a final run log`);
    const other = Object.entries(r.byOutcome).filter(([outcome]) => outcome !== 'completed');
    for (const [outcome, n] of other) notes.push(`round ${i + 1}: ${n} run(s) ended ${outcome}`);
    if (r.stuck > 0) notes.push(`round ${i + 1}: ${r.stuck} run(s) stuck unfinished`);
    else if (!r.drained) notes.push(`round ${i + 1}: backlog not drained in ${DRAIN_TIMEOUT_MS / 1000} s`);
  }
  if (c.health.primed.stuck > 0)
    notes.push(`priming (untimed): ${c.health.primed.stuck} run(s) unfinished for 3 s after parking`);
  else if (!c.health.primed.drained) notes.push('priming (untimed): backlog not drained');
  for (const r of c.health.endReasons)
    notes.push(`${r.count} run(s) ${r.outcome} (${r.reason ?? 'no reason'}) in the store`);
  if (c.health.killed > 0) notes.push(`${c.health.killed} worker(s) killed after the stop timeout`);
  for (const p of c.health.problems) notes.push(`${p.count}x ${p.message}`);
  return `${label}${notes.length === 0 ? 'ok: every ended run has its END line and final run log' : notes.join('; ')}`;
}

export function format(report) {
  const { options } = report;
  const configs = report.configurations;
  const lines = [
    `throughput: sustained runs/s over a ${options.seconds} s window after a ${options.warmup} s warm-up, ` +
      `median of ${options.rounds} round${options.rounds === 1 ? '' : 's'}`,
  ];
  if (options.systems.includes('ursa')) {
    lines.push(
      `Ursa: ${formatCount(options.schedulers)} schedulers (recipe noop) firing every second (* * * * * *): ` +
        `${formatCount(options.schedulers)} occurrences/s offered, above capacity (one that falls behind runs once, ` +
        'coalesced); dist/ built from the ' +
        `${report.ursa}; workers: node dist/cli/main.js worker --db <store>, log level warn`,
    );
  }
  if (options.systems.includes('graphile-worker')) {
    lines.push(
      `graphile-worker ${report.graphileWorker}: a no-op task on a fresh database of the same server, the queue ` +
        `topped up to ${formatCount(options.jobs)} jobs (graphile_worker.add_jobs) before each round; each ` +
        'process one runner as its performance page configures it (concurrency 24, pool 25, localQueue 500, ' +
        'completeJobBatchDelay 0)',
    );
  }
  lines.push(...storeLines(report));
  lines.push(
    loadLine(report),
    '',
    table(report),
    '',
    'health:',
    ...configs.map(healthLine),
    '',
    '- runs/s (Ursa): runs whose state is ended with ended_at in the window ÷ its length; each was claimed, ' +
      'started (process, START line), its engine called, and ended (process, run, END line, run log rewritten ' +
      'with its outcome, in one transaction); the health lines say if any lacks its END line or final run log',
    '- CPU ms/run: CPU time (user + system, from /proc) over the window ÷ the runs (jobs) it counts: of the ' +
      'worker (runner) processes, with their children; and of every PostgreSQL server process on this machine ' +
      '(backends, WAL writer, checkpointer, autovacuum; those of closed connections through the postmaster); ' +
      '"-": not measurable here (no /proc, or a server elsewhere)',
    "- WAL/run: bytes of PostgreSQL write-ahead log written over the window (the server's, every database) ÷ " +
      'the runs it counts',
    '- claims/s: runs whose claimed_at (the claiming tick) is in the window ÷ its length',
    '- runs/s (graphile-worker): jobs completed (deleted from its table) between the window’s start and end ÷ ' +
      'its length; "+": the queue ran dry in the window',
    '- Ursa ÷ graphile-worker: against graphile-worker with the same number of processes; a graphile-worker ' +
      'job is one row inserted beforehand and deleted when done, an Ursa run is an occurrence claimed and ' +
      'recorded as above',
    `- target (issue #11): >= ${formatCount(TARGET_RUNS_PER_SECOND.sqlite)} runs/s end to end on SQLite; shown, not asserted`,
  );
  return lines.join('\n');
}
