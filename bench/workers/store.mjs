import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { defaultEngines } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { applyDirectory } from '../../dist/service/apply.js';
import { libraryActor } from '../../dist/store/audit.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { systemClock } from '../../dist/time/clock.js';

/**
 * The benchmark's side of the store: seeding through Ursa's own `applyDirectory`, and the few
 * reads and writes the measurement needs, all through Ursa's store (Kysely over dist/), so that
 * they speak both dialects. Only `schedule_state.next_run_at` is ever written directly: to park
 * the schedulers while the workers start, to release them, and to make everything due at once.
 */

export const TENANT = 'default';
export const PROJECT = 'bench';
const USER = 'bench';

/** Scheduler `i` is `sNNNNN` and fires once a minute, at second `i % 60`. */
export const schedulerName = (i) => `s${String(i).padStart(5, '0')}`;

/**
 * Writes `count` scheduler documents laid out like a project; returns the folder. Scheduler `i`
 * fires once a minute at second `i % 60`, or with `everySecond` every second (`* * * * * *`).
 */
export function writeSchedulerFolder(dir, count, { everySecond = false } = {}) {
  const folder = join(dir, '_vance', 'scheduler');
  mkdirSync(folder, { recursive: true });
  for (let i = 0; i < count; i++) {
    const [when, cron] = everySecond
      ? ['every second', '* * * * * *']
      : [`once a minute at second ${i % 60}`, `${i % 60} * * * * *`];
    writeFileSync(
      join(folder, `${schedulerName(i)}.yaml`),
      `description: Benchmark scheduler ${i}, ${when}.\ncron: "${cron}"\nrecipe: noop\n`,
    );
  }
  return dir;
}

/** How many of `count` schedulers fire at the whole second `ms` (epoch ms). */
export function dueAt(ms, count) {
  const r = Math.floor(ms / 1000) % 60;
  return r < count % 60 ? Math.ceil(count / 60) : Math.floor(count / 60);
}

/**
 * Loads the folder into a fresh store at `location` with `applyDirectory` (every document
 * validated, then the project refreshed), on a runtime built as the tests build theirs. Throws
 * when any document is not created; returns the seconds it took.
 */
export async function seed(location, folder, count) {
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
    const entries = await applyDirectory(rt, folder, TENANT, PROJECT, libraryActor(USER));
    const seconds = (performance.now() - started) / 1000;
    const refused = entries.filter((entry) => entry.status !== 'created');
    if (refused.length > 0 || entries.length !== count) {
      const first = refused[0];
      throw new Error(
        `seeding: ${entries.length - refused.length} of ${count} documents created` +
          (first === undefined
            ? ''
            : `; first refused: ${first.path}: ${first.status} ${first.message ?? ''}`),
      );
    }
    const states = await countStates(store);
    if (states !== count)
      throw new Error(`seeding: ${states} schedule states after apply, expected ${count}`);
    return seconds;
  } finally {
    await store.close();
  }
}

export function open(location) {
  return openStore(location);
}

async function countStates(store) {
  const row = await store.db
    .selectFrom('schedule_state')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const num = (value) => (value === null || value === undefined ? null : Number(value));

/** Moves every scheduler's next occurrence to `at` (a refresh of an unchanged document keeps it). */
export async function setAllNextRunAt(store, at) {
  await store.db.updateTable('schedule_state').set({ next_run_at: at }).execute();
}

/**
 * Releases the parked schedulers: each waits again for its own next occurrence at or after
 * `base` (a whole second), as a refresh at that instant would have computed. Then tells the
 * workers (PostgreSQL NOTIFY; a SQLite worker looks again within its 1 s sleep).
 */
export async function release(store, base, count) {
  const byResidue = new Map();
  for (let i = 0; i < count; i++) {
    const list = byResidue.get(i % 60) ?? [];
    list.push(schedulerName(i));
    byResidue.set(i % 60, list);
  }
  const baseSecond = Math.floor(base / 1000) % 60;
  await store.db.transaction().execute(async (trx) => {
    for (const [residue, names] of byResidue) {
      const next = base + ((residue - baseSecond + 60) % 60) * 1000;
      await trx.updateTable('schedule_state').set({ next_run_at: next }).where('name', 'in', names).execute();
    }
  });
  await store.notifyChange();
}

/** The worker rows of the given process ids. */
export async function workerRows(store, pids) {
  const rows = await store.db
    .selectFrom('workers')
    .select(['id', 'pid', 'started_at', 'heartbeat_at', 'stopped_at'])
    .where('pid', 'in', pids)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    pid: Number(row.pid),
    startedAt: Number(row.started_at),
    heartbeatAt: Number(row.heartbeat_at),
    stoppedAt: num(row.stopped_at),
  }));
}

/** Schedulers still waiting for the instant `at`: 0 once every one of them was claimed. */
export async function waitingFor(store, at) {
  const row = await store.db
    .selectFrom('schedule_state')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('next_run_at', '=', at)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The earliest claimed_at (the first claiming tick's start) of the runs of occurrence `at`, or null. */
export async function firstClaim(store, at) {
  const row = await store.db
    .selectFrom('runs')
    .select((eb) => eb.fn.min('claimed_at').as('first'))
    .where('scheduled_for', '=', at)
    .executeTakeFirst();
  return num(row?.first);
}

/** Runs not yet ended or skipped (claimed, queued or started): a worker's backlog. */
export async function unfinished(store) {
  const row = await store.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('state', 'in', ['claimed', 'queued', 'started'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Runs of occurrences in [from, to) that have started. */
export async function startedBetween(store, from, to) {
  const row = await store.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('scheduled_for', '>=', from)
    .where('scheduled_for', '<', to)
    .where('started_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Runs claimed (claimed_at) in [from, to). */
export async function claimedBetween(store, from, to) {
  const row = await store.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('claimed_at', '>=', from)
    .where('claimed_at', '<', to)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Runs that ended (state `ended`, ended_at) in [from, to), by outcome, and how many of them have
 * what an ended run leaves in the store: an `END` feed line (trace id = correlation id) and a run
 * log document at its log path that carries its final outcome (the log is rewritten at the end).
 */
export async function endedBetween(store, from, to) {
  const { rows } = await sql`
    select r.outcome as outcome, count(*) as n,
      sum(case when exists (
        select 1 from feed f
        where f.tenant = r.tenant and f.project = r.project and f.ref_type = 'SCHEDULER'
          and f.ref_id = r.name and f.trace_id = r.correlation_id and f.kind = 'END'
      ) then 1 else 0 end) as end_lines,
      sum(case when exists (
        select 1 from documents d
        where d.tenant = r.tenant and d.project = r.project and d.path = r.log_path
          and d.body like ('%' || 'outcome: ' || r.outcome || '%')
      ) then 1 else 0 end) as run_logs
    from runs r
    where r.state = 'ended' and r.ended_at >= ${from} and r.ended_at < ${to}
    group by r.outcome`.execute(store.db);
  const byOutcome = Object.fromEntries(rows.map((row) => [row.outcome, Number(row.n)]));
  const total = (key) => rows.reduce((sum, row) => sum + Number(row[key]), 0);
  return { runs: total('n'), endLines: total('end_lines'), runLogs: total('run_logs'), byOutcome };
}

/** The runs of occurrences in [from, to): the instants the lateness figures are made of. */
export async function runsBetween(store, from, to) {
  const rows = await store.db
    .selectFrom('runs')
    .select(['scheduled_for', 'claimed_at', 'started_at', 'worker_id', 'state', 'outcome', 'coalesced'])
    .where('scheduled_for', '>=', from)
    .where('scheduled_for', '<', to)
    .execute();
  return rows.map((row) => ({
    scheduledFor: Number(row.scheduled_for),
    claimedAt: Number(row.claimed_at),
    startedAt: num(row.started_at),
    workerId: row.worker_id,
    state: row.state,
    outcome: row.outcome,
    coalesced: Number(row.coalesced) === 1,
  }));
}

/** Runs ended with a reason other than a plain completion, by reason (e.g. worker-lost). */
export async function endReasons(store) {
  const rows = await store.db
    .selectFrom('runs')
    .select(['outcome', 'reason', (eb) => eb.fn.countAll().as('n')])
    .where('outcome', 'not in', ['completed', 'pending'])
    .groupBy(['outcome', 'reason'])
    .execute();
  return rows.map((row) => ({ outcome: row.outcome, reason: row.reason, count: Number(row.n) }));
}

/** The version of the SQLite library Ursa's driver (better-sqlite3) is built with. */
export function sqliteVersion() {
  try {
    const require = createRequire(import.meta.url);
    const SQLite = require('better-sqlite3');
    const db = new SQLite(':memory:');
    const version = db.prepare('select sqlite_version() as v').get().v;
    db.close();
    return version;
  } catch {
    return 'unknown';
  }
}

/** PostgreSQL's current write-ahead log position (an LSN, as text): the server's, all databases. */
export async function walPosition(store) {
  const { rows } = await sql`select pg_current_wal_lsn()::text as lsn`.execute(store.db);
  return rows[0].lsn;
}

/** Bytes of write-ahead log between two positions of {@link walPosition}. */
export async function walBytesBetween(store, from, to) {
  const { rows } = await sql`select pg_wal_lsn_diff(${to}::pg_lsn, ${from}::pg_lsn)::bigint as n`.execute(
    store.db,
  );
  return Number(rows[0].n);
}
