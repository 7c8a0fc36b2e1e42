import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { defaultEngines } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { applyDirectory } from '../../dist/service/apply.js';
import { libraryActor } from '../../dist/store/audit.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { systemClock } from '../../dist/time/clock.js';
import { killWorkers, readLogs, startWorkers, stopWorkers } from '../workers/processes.mjs';
import { endReasons, setAllNextRunAt } from '../workers/store.mjs';
import { until, waitReady } from '../workers/wait.mjs';

/**
 * Ursa's side of the burst scenario: the schedulers, seeded once per store through Ursa's own
 * `applyDirectory` (every document validated), and one configuration — worker processes on a copy
 * of the seeded store, every scheduler made due at one instant, the time until the last run of
 * that instant started and ended read back from the store.
 */

export const TENANT = 'default';
/** Zones whose 08:00 is the same instant all year (UTC+0, no daylight saving time). */
export const ZONES = ['UTC', 'Africa/Abidjan', 'Atlantic/Reykjavik', 'America/Danmarkshavn'];
const PARK_MS = 86_400_000;

const projectName = (p) => `p${String(p).padStart(3, '0')}`;

/**
 * Writes `count` scheduler documents spread evenly over `projects` project folders under `dir`:
 * each `0 0 8 * * *` (every day at 08:00) in one of {@link ZONES}, recipe `noop`. Returns the
 * folders with their project names.
 */
export function writeProjects(dir, count, projects) {
  const folders = [];
  for (let p = 0; p < projects; p++) {
    const folder = join(dir, projectName(p));
    const schedulers = join(folder, '_vance', 'scheduler');
    mkdirSync(schedulers, { recursive: true });
    folders.push({ project: projectName(p), folder });
  }
  for (let i = 0; i < count; i++) {
    const zone = ZONES[i % ZONES.length];
    writeFileSync(
      join(folders[i % projects].folder, '_vance', 'scheduler', `s${String(i).padStart(6, '0')}.yaml`),
      `description: Burst scheduler ${i}, every morning at 08:00 in ${zone}.\ncron: "0 0 8 * * *"\ntimezone: ${zone}\nrecipe: noop\n`,
    );
  }
  return folders;
}

/** Loads every project folder into the store at `location` with `applyDirectory`; returns the seconds it took. */
export async function seedProjects(location, folders, count) {
  const store = await openStore(location);
  try {
    const rt = {
      repos: repositories(store),
      clock: systemClock,
      settings: { misfireThresholdMs: 60_000, runLogRetentionDays: 7, shutdownGraceMs: 5_000 },
      engines: defaultEngines(),
      log: createLogger('silent'),
    };
    const started = performance.now();
    let created = 0;
    for (const { project, folder } of folders) {
      const entries = await applyDirectory(rt, folder, TENANT, project, libraryActor('bench'));
      created += entries.filter((e) => e.status === 'created').length;
    }
    if (created !== count) throw new Error(`seeding: ${created} of ${count} documents created`);
    await setAllNextRunAt(store, Date.now() + PARK_MS);
    return (performance.now() - started) / 1000;
  } finally {
    await store.close();
  }
}

/** A copy of a seeded SQLite store (its WAL checkpointed into the file by the close). */
export function copySqlite(file, to) {
  mkdirSync(join(to, '..'), { recursive: true });
  copyFileSync(file, to);
  return to;
}

const num = (v) => (v === null || v === undefined ? null : Number(v));

/** What the store holds of the runs of occurrence `at`: counts, and the spread of their instants. */
async function runsOf(store, at) {
  const { rows } = await sql`
    select count(*) as runs,
      sum(case when state = 'ended' then 1 else 0 end) as ended,
      sum(case when started_at is not null then 1 else 0 end) as started,
      max(claimed_at) as last_claim, max(started_at) as last_start, max(ended_at) as last_end
    from runs where scheduled_for = ${at}`.execute(store.db);
  const r = rows[0];
  return {
    runs: Number(r.runs),
    ended: Number(r.ended ?? 0),
    started: Number(r.started ?? 0),
    lastClaim: num(r.last_claim),
    lastStart: num(r.last_start),
    lastEnd: num(r.last_end),
  };
}

/** The p50 and p99 of started_at − `at` over the runs of occurrence `at`, ms. */
async function startQuantiles(store, at) {
  const rows = await store.db
    .selectFrom('runs')
    .select('started_at')
    .where('scheduled_for', '=', at)
    .where('started_at', 'is not', null)
    .orderBy('started_at')
    .execute();
  const q = (p) =>
    rows.length === 0
      ? null
      : Number(rows[Math.min(rows.length - 1, Math.floor(p * rows.length))].started_at) - at;
  return { p50: q(0.5), p99: q(0.99) };
}

/** How many ended runs of occurrence `at` lack their END feed line or their final run log. */
async function missingRecords(store, at) {
  const { rows } = await sql`
    select
      sum(case when not exists (
        select 1 from feed f where f.tenant = r.tenant and f.project = r.project and f.ref_type = 'SCHEDULER'
          and f.ref_id = r.name and f.trace_id = r.correlation_id and f.kind = 'END') then 1 else 0 end) as no_end,
      sum(case when not exists (
        select 1 from documents d where d.tenant = r.tenant and d.project = r.project and d.path = r.log_path
          and d.body like ('%' || 'outcome: ' || r.outcome || '%')) then 1 else 0 end) as no_log
    from runs r where r.scheduled_for = ${at} and r.state = 'ended'`.execute(store.db);
  return { endLines: Number(rows[0].no_end ?? 0), runLogs: Number(rows[0].no_log ?? 0) };
}

/**
 * One configuration: `count` workers on the store at `location` (a copy of the seeded one); every
 * scheduler made due at the next whole second at least `leadMs` after the workers are ready; then
 * waits until every run of that instant has ended (or `timeoutMs`). Times are from the instant.
 */
export async function ursaBurst({
  label,
  location,
  count,
  dir,
  main,
  schedulers,
  leadMs,
  timeoutMs,
  onProgress,
}) {
  const store = await openStore(location);
  let workers;
  try {
    onProgress(`${label}: starting the workers`);
    workers = startWorkers({ main, count, location, dir, logLevel: 'warn', name: `burst-${count}` });
    await waitReady(store, workers);
    const at = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
    await setAllNextRunAt(store, at);
    await store.notifyChange();
    onProgress(`${label}: ${schedulers} schedulers due at ${new Date(at).toISOString()}`);
    let seen;
    const done = await until(
      async () => {
        if (Date.now() < at) return false;
        seen = await runsOf(store, at);
        return seen.ended >= schedulers;
      },
      { everyMs: 500, timeoutMs: at - Date.now() + timeoutMs, workers },
    );
    const observedMs = Date.now() - at;
    const runs = await runsOf(store, at);
    const quantiles = await startQuantiles(store, at);
    const missing = await missingRecords(store, at);
    onProgress(
      `${label}: ${runs.started} started, last ${((runs.lastStart - at) / 1000).toFixed(1)} s after the instant; ` +
        `${runs.ended} ended, last ${((runs.lastEnd - at) / 1000).toFixed(1)} s after`,
    );
    const stops = await stopWorkers(workers);
    const logs = readLogs(workers);
    return {
      system: 'ursa',
      workers: count,
      instant: at,
      complete: done,
      observedMs,
      runs: runs.runs,
      started: runs.started,
      ended: runs.ended,
      lastClaimMs: runs.lastClaim === null ? null : runs.lastClaim - at,
      lastStartMs: runs.lastStart === null ? null : runs.lastStart - at,
      lastEndMs: runs.lastEnd === null ? null : runs.lastEnd - at,
      startP50Ms: quantiles.p50,
      startP99Ms: quantiles.p99,
      health: {
        missing,
        endReasons: await endReasons(store),
        killed: stops.filter((s) => s.signal === 'SIGKILL').length,
        problems: logs.problems,
      },
    };
  } catch (error) {
    onProgress(`${label}: failed: ${error.message}`);
    return { system: 'ursa', workers: count, error: error.message };
  } finally {
    killWorkers(workers);
    await store.close();
  }
}
