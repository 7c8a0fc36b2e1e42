import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bullmqBurst, graphileBurst } from './burst/peers.mjs';
import { copySqlite, seedProjects, ursaBurst, writeProjects, ZONES } from './burst/ursa.mjs';
import { positive, positives, stores, usageError } from './lib/args.mjs';
import { loadLine, storeLines } from './lib/report.mjs';
import { ursaSource } from './lib/setup.mjs';
import { formatCount, formatTable } from './lib/table.mjs';
import { versionOf } from './peers/versions.mjs';
import { postgresServer } from './workers/postgres.mjs';
import { snapshotDist } from './workers/processes.mjs';
import { sqliteVersion } from './workers/store.mjs';

/**
 * Scenario `burst`: the top of the hour. `--schedulers` schedulers (recipe noop, spread over
 * `--projects` projects, `0 0 8 * * *` in zones whose 08:00 is one instant) all due at one
 * instant; the time from that instant until the last run has started and until the last has
 * ended with its records, for real `ursa worker` processes on SQLite (one worker) and PostgreSQL
 * (1, 2, 4 workers); beside graphile-worker (as many jobs with one `run_at`) and BullMQ (as many
 * jobs delayed to the instant), with the same numbers of processes, on the same machine.
 *
 * The instant is made, not waited for: once the workers are ready, every scheduler's next
 * occurrence is set to the next whole second 30 s away, as the claims of the day
 * before would have left it; the workers claim it from their fire-ahead window on, as they would
 * at 08:00. It asserts nothing: the targets are printed as a column.
 */

const DEFAULTS = {
  schedulers: 100_000,
  projects: 100,
  workers: [1, 2, 4],
  lead: 30,
  peerLead: 20,
  timeout: 300,
};
const SYSTEMS = ['ursa', 'graphile-worker', 'bullmq'];
/** The targets of issue #24: every run started within this long of its instant, ms. */
const TARGET_MS = { sqlite: 15_000, postgresql: 10_000 };

function parseArgs(args) {
  const options = { ...DEFAULTS, stores: ['postgresql', 'sqlite'], systems: [...SYSTEMS] };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (value === undefined) throw usageError(`${arg}: expected ${flag}=<value>`);
    else if (flag === '--schedulers') options.schedulers = positive(arg, value);
    else if (flag === '--projects') options.projects = positive(arg, value);
    else if (flag === '--workers') options.workers = positives(arg, value);
    else if (flag === '--stores') options.stores = stores(arg, value);
    else if (flag === '--timeout') options.timeout = positive(arg, value);
    else if (flag === '--systems') {
      options.systems = value.split(',');
      const unknown = options.systems.find((s) => !SYSTEMS.includes(s));
      if (unknown !== undefined) throw usageError(`${arg}: systems are ${SYSTEMS.join(', ')}`);
    } else throw usageError(`unknown option ${arg}`);
  }
  return options;
}

export async function run(args, { onProgress = () => {} } = {}) {
  const options = parseArgs(args);
  const started = performance.now();
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-burst-'));
  const dist = snapshotDist();
  const configurations = [];
  const report = {
    scenario: 'burst',
    options,
    ursa: ursaSource(),
    peers: { graphileWorker: versionOf('graphile-worker'), bullmq: versionOf('bullmq') },
    seedSeconds: {},
    configurations,
  };
  const ursa = options.systems.includes('ursa');
  const timeoutMs = options.timeout * 1000;
  let server;
  const databases = [];
  try {
    const needsPostgres =
      options.systems.includes('graphile-worker') || (ursa && options.stores.includes('postgresql'));
    if (needsPostgres) {
      server = await postgresServer(onProgress);
      report.postgres = { version: server.version, source: server.source, settings: server.settings };
    }
    const common = {
      dir,
      main: dist.main,
      schedulers: options.schedulers,
      leadMs: options.lead * 1000,
      timeoutMs,
      onProgress,
    };
    if (ursa) {
      onProgress(`writing ${options.schedulers} scheduler documents in ${options.projects} projects`);
      const folders = writeProjects(join(dir, 'projects'), options.schedulers, options.projects);
      if (options.stores.includes('postgresql')) {
        const template = await server.createDatabase();
        databases.push(template);
        onProgress(`seeding PostgreSQL (applyDirectory, ${options.schedulers} documents)`);
        report.seedSeconds.postgresql = await seedProjects(template.url, folders, options.schedulers);
        for (const count of options.workers) {
          const database = await server.createDatabase(template);
          databases.push(database);
          const label = `Ursa PostgreSQL, ${count} worker${count === 1 ? '' : 's'}`;
          const r = await ursaBurst({ ...common, label, location: database.url, count });
          configurations.push({ ...r, store: 'postgresql' });
          await server.dropDatabase(database);
        }
      }
      if (options.stores.includes('sqlite')) {
        const seeded = join(dir, 'sqlite', 'seeded.db');
        report.sqlite = { version: sqliteVersion() };
        onProgress(`seeding SQLite (applyDirectory, ${options.schedulers} documents)`);
        report.seedSeconds.sqlite = await seedProjects(seeded, folders, options.schedulers);
        const location = copySqlite(seeded, join(dir, 'sqlite', 'run', 'ursa.db'));
        const r = await ursaBurst({ ...common, label: 'Ursa SQLite, 1 worker', location, count: 1 });
        configurations.push({ ...r, store: 'sqlite' });
      }
    }
    const peer = { dir, jobs: options.schedulers, leadMs: DEFAULTS.peerLead * 1000, timeoutMs };
    for (const count of options.workers) {
      if (options.systems.includes('graphile-worker')) {
        onProgress(`graphile-worker, ${count} process(es): ${options.schedulers} jobs with one run_at`);
        const r = await graphileBurst({ ...peer, server, count }).catch((e) => ({
          system: 'graphile-worker',
          workers: count,
          error: e.message,
        }));
        configurations.push({ ...r, store: 'postgresql' });
      }
      if (options.systems.includes('bullmq')) {
        onProgress(`BullMQ, ${count} process(es): ${options.schedulers} jobs delayed to one instant`);
        const r = await bullmqBurst({ ...peer, count }).catch((e) => ({
          system: 'BullMQ',
          workers: count,
          error: e.message,
        }));
        configurations.push({ ...r, store: 'redis' });
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

const STORE = { sqlite: 'SQLite', postgresql: 'PostgreSQL', redis: 'Redis' };
const secs = (ms) => (ms === null || ms === undefined ? '-' : (ms / 1000).toFixed(1));

function table(report) {
  const headers = [
    'system',
    'store',
    'workers',
    'started',
    'last started (s)',
    'p50 / p99 start (s)',
    'last ended (s)',
    'target',
  ];
  const rows = report.configurations.map((c) => {
    const system = c.system === 'ursa' ? 'Ursa' : c.system;
    const head = [system, STORE[c.store], String(c.workers)];
    if (c.error !== undefined) return [...head, 'FAILED', '-', '-', '-', ''];
    const target = c.system === 'ursa' ? TARGET_MS[c.store] : undefined;
    const met = c.complete && c.started >= report.options.schedulers && c.lastStartMs <= target;
    return [
      ...head,
      formatCount(c.started),
      secs(c.lastStartMs),
      c.startP50Ms === undefined ? '-' : `${secs(c.startP50Ms)} / ${secs(c.startP99Ms)}`,
      secs(c.lastEndMs),
      target === undefined ? '' : `<= ${target / 1000} s (${met ? 'met' : 'not met'})`,
    ];
  });
  return formatTable(headers, rows, { textColumns: 2 });
}

function healthLine(c) {
  const label = `- ${c.system === 'ursa' ? 'Ursa' : c.system} ${STORE[c.store]}, ${c.workers} process${c.workers === 1 ? '' : 'es'}: `;
  if (c.error !== undefined) return `${label}FAILED: ${c.error}`;
  const notes = [];
  if (!c.complete) notes.push('not every run ended within the timeout');
  if (c.addedBeforeInstant === false)
    notes.push('adding the jobs took past the instant (its figures start late)');
  if (c.system === 'ursa') {
    if (c.health.missing.endLines > 0)
      notes.push(`${c.health.missing.endLines} ended run(s) without an END line`);
    if (c.health.missing.runLogs > 0)
      notes.push(`${c.health.missing.runLogs} ended run(s) without a final run log`);
    for (const r of c.health.endReasons)
      notes.push(`${r.count} run(s) ${r.outcome} (${r.reason ?? 'no reason'})`);
    if (c.health.killed > 0) notes.push(`${c.health.killed} worker(s) killed after the stop timeout`);
    for (const p of c.health.problems) notes.push(`${p.count}x ${p.message}`);
    notes.push(`last claim ${secs(c.lastClaimMs)} s after the instant`);
  }
  return `${label}${notes.length === 0 ? 'ok' : notes.join('; ')}`;
}

export function format(report) {
  const { options } = report;
  const lines = [
    `burst: ${formatCount(options.schedulers)} schedulers due at one instant, times from that instant`,
    `Ursa: recipe noop, ${options.projects} projects, "0 0 8 * * *" in ${ZONES.join(', ')} (08:00 is one instant ` +
      `in all of them); the instant set ${options.lead} s after the workers are ready (a real one is known a day ahead; workers prepare the last minute); dist/ built from the ` +
      `${report.ursa}; workers: node dist/cli/main.js worker --db <store>, log level warn`,
    `graphile-worker ${report.peers.graphileWorker}: as many jobs added with one run_at (graphile_worker.add_jobs), ` +
      'runners as in the throughput scenario; BullMQ ' +
      `${report.peers.bullmq}: as many jobs added delayed to the instant (Queue.addBulk), a Worker with concurrency 100 ` +
      `per process, on the machine's Redis; the peers' instant is ${DEFAULTS.peerLead} s after their runners are ready`,
    ...storeLines(report),
    loadLine(report),
    '',
    table(report),
    '',
    'health:',
    ...report.configurations.map(healthLine),
    '',
    '- started: runs (jobs) of the instant that started; last started: the latest start after the instant (Ursa: ' +
      'the started_at its start transaction writes, just before its engine is entered; peers: when their task began)',
    '- last ended: Ursa: the latest ended_at of those runs, each ended with its process, END line and final run log ' +
      'in one transaction; peers: when the bench saw the last job gone (polled every 100 ms)',
    `- target (issue #24): every run started within ${TARGET_MS.postgresql / 1000} s on PostgreSQL with 2 workers, ` +
      `within ${TARGET_MS.sqlite / 1000} s on SQLite; shown for every Ursa row, not asserted`,
  ];
  return lines.join('\n');
}
