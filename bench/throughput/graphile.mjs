import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations } from 'graphile-worker';
// Ursa's own driver (resolved from the root), as bench/workers/postgres.mjs uses it: the benchmark's
// side only adds the backlog and counts what is left; the runners are graphile-worker's.
import pg from 'pg';
import { cpuMeter, perUnit } from '../lib/cpu.mjs';
import { sleep, startWorkers, stopWorkers } from '../workers/processes.mjs';
import { until } from '../workers/wait.mjs';

const RUNNER = fileURLToPath(new URL('./graphile-runner.mjs', import.meta.url));
const READY_TIMEOUT_MS = 60_000;
const silent = new Logger(() => () => {});

/** Jobs still in graphile-worker's table: it deletes a job when it completes. */
async function remaining(client) {
  const { rows } = await client.query('select count(*)::int as n from graphile_worker._private_jobs');
  return rows[0].n;
}

/** The server's write-ahead log position (an LSN, as text). */
async function walPosition(client) {
  return (await client.query('select pg_current_wal_lsn()::text as lsn')).rows[0].lsn;
}

/** Bytes of write-ahead log since the position `from`. */
async function walBytesSince(client, from) {
  const { rows } = await client.query(
    'select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint as n',
    [from],
  );
  return Number(rows[0].n);
}

/** Adds `count` no-op jobs in one `graphile_worker.add_jobs` call (its documented bulk SQL API). */
async function addJobs(client, count) {
  await client.query(
    `select graphile_worker.add_jobs(array(
       select row('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec
       from generate_series(1, $1::int)))`,
    [count],
  );
}

/** The moment each runner printed `ready` (graphile-runner.mjs), or throws after the timeout. */
async function waitRunners(runners) {
  const ok = await until(() => runners.every((r) => readFileSync(r.logFile, 'utf8').includes('ready\n')), {
    everyMs: 20,
    timeoutMs: READY_TIMEOUT_MS,
    workers: runners,
  });
  if (!ok) throw new Error(`graphile-worker runners not ready after ${READY_TIMEOUT_MS / 1000} s`);
  return runners.map((r) => (Date.now() - r.spawnedAt) / 1000);
}

/**
 * graphile-worker's jobs per second with `count` runner processes on a fresh database of `server`:
 * per round, the queue is topped up to `jobs` no-op jobs, the runners start, and after `warmup`
 * seconds the jobs left are counted at the start and the end of a `seconds` window. A queue that
 * ran dry before the window ended makes the figure a lower bound (`exhausted`).
 */
export async function graphileThroughput({ server, count, dir, options, onProgress }) {
  const database = await server.createDatabase();
  const client = new pg.Client({ connectionString: database.url });
  client.on('error', () => {});
  let runners;
  try {
    await client.connect();
    await runMigrations({ connectionString: database.url, logger: silent });
    const rounds = [];
    for (let round = 1; round <= options.rounds; round++) {
      const added = options.jobs - (await remaining(client));
      const addStarted = Date.now();
      if (added > 0) await addJobs(client, added);
      const addSeconds = (Date.now() - addStarted) / 1000;
      runners = startWorkers({ main: RUNNER, args: [database.url], count, dir, name: 'graphile' });
      const startupSeconds = await waitRunners(runners);
      await sleep(options.warmup * 1000);
      const meter = cpuMeter(
        runners.map((r) => r.pid),
        { postgres: true },
      );
      const from = Date.now();
      meter.start();
      const walFrom = await walPosition(client);
      const atFrom = await remaining(client);
      await sleep(from + options.seconds * 1000 - Date.now());
      const to = Date.now();
      const atTo = await remaining(client);
      const cpu = meter.stop();
      const walBytes = await walBytesSince(client, walFrom);
      await stopWorkers(runners);
      runners = undefined;
      const r = {
        added,
        addSeconds,
        startupSeconds,
        completed: atFrom - atTo,
        jobsPerSecond: (atFrom - atTo) / ((to - from) / 1000),
        exhausted: atTo === 0,
        cpu: {
          workerMsPerRun: perUnit(cpu.processMs, atFrom - atTo),
          postgresMsPerRun: perUnit(cpu.postgresMs, atFrom - atTo),
        },
        walBytesPerRun: perUnit(walBytes, atFrom - atTo),
      };
      rounds.push(r);
      onProgress(
        `round ${round}/${options.rounds}: ${r.completed} jobs in ${((to - from) / 1000).toFixed(1)} s, ` +
          `${r.jobsPerSecond.toFixed(0)} jobs/s${r.exhausted ? ' (queue ran dry: a lower bound)' : ''}`,
      );
    }
    return rounds;
  } finally {
    if (runners !== undefined) await stopWorkers(runners, 10_000);
    await client.end().catch(() => {});
    await server.dropDatabase(database);
  }
}
