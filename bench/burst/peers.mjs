import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Logger, runMigrations } from 'graphile-worker';
import IORedis from 'ioredis';
// Ursa's own driver (resolved from the root), as bench/workers/postgres.mjs uses it.
import pg from 'pg';
import { killWorkers, startWorkers, stopWorkers } from '../workers/processes.mjs';
import { until } from '../workers/wait.mjs';

/**
 * The peers' side of the burst scenario, each as its users would meet a top of the hour: every
 * job scheduled ahead for one instant, runner processes waiting for it. graphile-worker: `count`
 * runners on a fresh database of the same server, the jobs added with one `run_at`
 * (`graphile_worker.add_jobs`). BullMQ: `count` processes with a Worker each on the machine's
 * Redis, the jobs added delayed to the instant (`Queue.addBulk`). Each runner notes when its jobs
 * started; "ended" is when the bench saw the last job gone (polled every 100 ms).
 */

const REDIS_URL = process.env.URSA_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const silent = new Logger(() => () => {});
const READY_TIMEOUT_MS = 60_000;

async function waitReady(runners) {
  const ok = await until(() => runners.every((r) => readFileSync(r.logFile, 'utf8').includes('ready\n')), {
    everyMs: 20,
    timeoutMs: READY_TIMEOUT_MS,
    workers: runners,
  });
  if (!ok) throw new Error(`runners not ready after ${READY_TIMEOUT_MS / 1000} s`);
}

// The runners' own account, printed as their last line when they stopped.
function runnerStarts(runners) {
  const reports = runners.map((r) => {
    const lines = readFileSync(r.logFile, 'utf8').trim().split('\n');
    return JSON.parse(lines[lines.length - 1]);
  });
  const lasts = reports.map((r) => r.lastStart).filter((v) => v !== null);
  return {
    jobs: reports.reduce((sum, r) => sum + r.jobs, 0),
    lastStart: lasts.length === 0 ? null : Math.max(...lasts),
  };
}

// Waits for `left()` to reach 0 after `at`; the instant it was seen so, or null after the timeout.
async function drainedAt(left, at, timeoutMs, runners) {
  let seen = null;
  await until(
    async () => {
      if (Date.now() < at) return false;
      if ((await left()) > 0) return false;
      seen = Date.now();
      return true;
    },
    { everyMs: 100, timeoutMs: at - Date.now() + timeoutMs, workers: runners },
  );
  return seen;
}

function result(system, count, jobs, at, added, drained, starts) {
  return {
    system,
    workers: count,
    instant: at,
    addedBeforeInstant: added <= at,
    complete: drained !== null && starts.jobs >= jobs,
    started: starts.jobs,
    lastStartMs: starts.lastStart === null ? null : starts.lastStart - at,
    lastEndMs: drained === null ? null : drained - at,
  };
}

/** graphile-worker with `count` runner processes and `jobs` jobs whose `run_at` is one instant. */
export async function graphileBurst({ server, count, dir, jobs, leadMs, timeoutMs }) {
  const database = await server.createDatabase();
  const client = new pg.Client({ connectionString: database.url });
  client.on('error', () => {});
  let runners;
  try {
    await client.connect();
    await runMigrations({ connectionString: database.url, logger: silent });
    const main = fileURLToPath(new URL('./graphile-runner.mjs', import.meta.url));
    runners = startWorkers({ main, args: [database.url], count, dir, name: `graphile-burst-${count}` });
    await waitReady(runners);
    const at = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
    await client.query(
      `select graphile_worker.add_jobs(array(
         select row('burst', '{}'::json, null, to_timestamp($2::double precision / 1000), null, null, null, null)::graphile_worker.job_spec
         from generate_series(1, $1::int)))`,
      [jobs, at],
    );
    const added = Date.now();
    const left = async () =>
      (await client.query('select count(*)::int as n from graphile_worker._private_jobs')).rows[0].n;
    const drained = await drainedAt(left, at, timeoutMs, runners);
    await stopWorkers(runners, 30_000);
    const starts = runnerStarts(runners);
    runners = undefined;
    return result('graphile-worker', count, jobs, at, added, drained, starts);
  } finally {
    killWorkers(runners);
    await client.end().catch(() => {});
    await server.dropDatabase(database);
  }
}

/** BullMQ with `count` processes (a Worker each, concurrency 100) and `jobs` jobs delayed to one instant. */
export async function bullmqBurst({ count, dir, jobs, leadMs, timeoutMs }) {
  const connection = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const name = `ursa-bench-burst-${process.pid}-${Date.now()}`;
  const queue = new Queue(name, { connection });
  let runners;
  try {
    const main = fileURLToPath(new URL('./bullmq-runner.mjs', import.meta.url));
    runners = startWorkers({ main, args: [REDIS_URL, name], count, dir, name: `bullmq-burst-${count}` });
    await waitReady(runners);
    const at = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
    for (let i = 0; i < jobs; i += 1000) {
      const delay = Math.max(0, at - Date.now());
      const batch = Array.from({ length: Math.min(1000, jobs - i) }, () => ({
        name: 'burst',
        data: {},
        opts: { delay, removeOnComplete: true, removeOnFail: true },
      }));
      await queue.addBulk(batch);
    }
    const added = Date.now();
    const left = async () => {
      const counts = await queue.getJobCounts('wait', 'delayed', 'active', 'prioritized', 'waiting-children');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    };
    const drained = await drainedAt(left, at, timeoutMs, runners);
    await stopWorkers(runners, 30_000);
    const starts = runnerStarts(runners);
    runners = undefined;
    return result('BullMQ', count, jobs, at, added, drained, starts);
  } finally {
    killWorkers(runners);
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    connection.disconnect();
  }
}
