import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createUrsa, fixedClock } from '../dist/index.js';
import { Worker } from '../dist/runtime/worker.js';
import { graphileCatchUp } from './catchup/graphile.mjs';
import { positive, usageError } from './lib/args.mjs';
import { median } from './lib/measure.mjs';
import { formatCount, formatTable } from './lib/table.mjs';
import { versionOf } from './peers/versions.mjs';
import { postgresServer } from './workers/postgres.mjs';

/**
 * Catch-up after an outage (issue #11, decisions §4): a per-second scheduler (`misfire: once`,
 * the default) whose process was down for one hour, one day or ten years. The store's state is
 * left as the outage left it: registered at T0, the clock then jumps to T0 + outage and a worker
 * starts. Reported: runs created for the backlog (must be 1: the backlog is coalesced into one
 * run) and the time of the tick that decides it (claim, coalesce, start), which must not grow with
 * the outage. The clock is a stepped one, so the outage costs no wall time.
 *
 * Peers: graphile-worker is the one with a catch-up, its crontab `fill` (bench/catchup/graphile.mjs):
 * one job per missed minute, added one statement per minute, so both its runs and its time grow
 * with the outage; a restart that has not decided within `--budget` seconds is killed and reported
 * as a lower bound. croner and node-cron keep no state across a restart; a BullMQ job scheduler
 * holds one delayed job, so a restart runs at most that one; pg-boss sends an occurrence only
 * within a minute of it.
 */
const OUTAGES = [
  ['1 hour', 3_600_000],
  ['1 day', 86_400_000],
  ['10 years', 10 * 365.25 * 86_400_000],
];
const DEFAULTS = { rounds: 5, budget: 60, systems: ['ursa', 'graphile-worker'] };
const SYSTEMS = ['ursa', 'graphile-worker'];
const T0 = Date.parse('2026-01-01T00:00:00Z');

function parseArgs(args) {
  const options = { ...DEFAULTS };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (flag === '--rounds') options.rounds = positive(flag, value);
    else if (flag === '--budget') options.budget = positive(flag, value);
    else if (flag === '--systems') {
      options.systems = value.split(',');
      if (options.systems.some((s) => !SYSTEMS.includes(s)))
        throw usageError(`--systems: systems are ${SYSTEMS.join(', ')}`);
    } else throw usageError(`unknown option ${arg} (--rounds=N, --budget=S, --systems=${SYSTEMS.join(',')})`);
  }
  return options;
}

/** One round: a fresh store, one scheduler, one outage; returns { runs, decideMs, coalesced }. */
async function round(db, folder, outageMs) {
  const clock = fixedClock(T0);
  let entered = 0;
  const ursa = await createUrsa({ db, clock, logger: 'warn', engines: { probe: () => void entered++ } });
  try {
    await ursa.apply(folder);
    clock.set(T0 + outageMs);
    const worker = new Worker(ursa.runtime, { exclusive: true });
    await worker.bootstrap();
    const started = performance.now();
    const tick = await worker.tick();
    const decideMs = performance.now() - started;
    await worker.executor.settled();
    const runs = await ursa.repos.runs.listForScheduler('default', 'demo', 'every-second', 10);
    return { runs: runs.length, entered, decideMs, coalesced: tick.coalesced };
  } finally {
    await ursa.stop();
  }
}

export async function run(args, { onProgress }) {
  const options = parseArgs(args);
  const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-catchup-'));
  const folder = join(dir, 'project');
  mkdirSync(join(folder, '_vance', 'recipes'), { recursive: true });
  mkdirSync(join(folder, '_vance', 'scheduler'), { recursive: true });
  writeFileSync(join(folder, '_vance', 'recipes', 'probe.yaml'), 'description: probe\nengine: probe\n');
  writeFileSync(
    join(folder, '_vance', 'scheduler', 'every-second.yaml'),
    'description: every second\ncron: "* * * * * *"\ntimezone: UTC\nrecipe: probe\nmisfire: once\n',
  );
  const postgres = await postgresServer(onProgress);
  const report = { options, postgres: postgres.source, rows: [], peerRows: [] };
  try {
    if (options.systems.includes('ursa')) {
      for (const store of ['sqlite', 'postgresql']) {
        for (const [label, outageMs] of OUTAGES) {
          const rounds = [];
          for (let r = 1; r <= options.rounds; r++) {
            const database = store === 'postgresql' ? await postgres.createDatabase() : undefined;
            const db = database?.url ?? join(dir, `${store}-${label.replace(' ', '-')}-${r}.db`);
            try {
              rounds.push(await round(db, folder, outageMs));
            } finally {
              if (database !== undefined) await postgres.dropDatabase(database);
            }
          }
          const row = {
            store,
            outage: label,
            missed: outageMs / 1000,
            runs: Math.max(...rounds.map((r) => r.runs)),
            entered: Math.max(...rounds.map((r) => r.entered)),
            decideMs: median(rounds.map((r) => r.decideMs)),
          };
          onProgress(
            `${store}, outage ${label}: ${row.runs} run(s), decided in ${row.decideMs.toFixed(1)} ms`,
          );
          report.rows.push(row);
        }
      }
    }
    if (options.systems.includes('graphile-worker')) {
      report.graphileWorker = versionOf('graphile-worker');
      for (const [label, outageMs] of OUTAGES) {
        const rounds = [];
        // A restart that outran the budget is not repeated: the next would too.
        for (let r = 1; r <= options.rounds && rounds.every((x) => x.finished); r++) {
          rounds.push(await graphileCatchUp({ server: postgres, outageMs, budgetMs: options.budget * 1000 }));
        }
        const finished = rounds.every((x) => x.finished);
        const row = {
          outage: label,
          missed: outageMs / 60_000,
          rounds: rounds.length,
          finished,
          runs: Math.max(...rounds.map((x) => x.runs)),
          decideMs: finished ? median(rounds.map((x) => x.decideMs)) : undefined,
        };
        onProgress(
          `graphile-worker, outage ${label}: ${formatCount(row.runs)} job(s), ` +
            (finished
              ? `decided in ${row.decideMs.toFixed(1)} ms`
              : `not decided within ${options.budget} s`),
        );
        report.peerRows.push(row);
      }
    }
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

export function format(report) {
  const budgetMs = report.options.budget * 1000;
  const peer = new Map(report.peerRows.map((p) => [p.outage, p]));
  // Ursa's decide time over graphile-worker's for the same outage; an upper bound when it ran out of budget.
  const ratio = (r) => {
    const p = peer.get(r.outage);
    if (p === undefined) return '-';
    return p.finished
      ? (r.decideMs / p.decideMs).toPrecision(2)
      : `< ${(r.decideMs / budgetMs).toPrecision(2)}`;
  };
  const rows = report.rows.map((r) => [
    r.store === 'sqlite' ? 'Ursa (SQLite)' : 'Ursa (PostgreSQL)',
    r.outage,
    formatCount(r.missed),
    String(r.runs),
    String(r.entered),
    r.decideMs.toFixed(1),
    ratio(r),
    r.runs === 1 ? 'yes' : 'NO',
  ]);
  for (const p of report.peerRows) {
    rows.push([
      `graphile-worker ${report.graphileWorker} (fill)`,
      p.outage,
      formatCount(p.missed),
      `${p.finished ? '' : '>= '}${formatCount(p.runs)}`,
      '-',
      p.finished ? p.decideMs.toFixed(1) : `> ${formatCount(budgetMs)}`,
      '-',
      p.runs === 1 ? 'yes' : 'no',
    ]);
  }
  return [
    `catch-up after an outage (Ursa: "* * * * * *", misfire: once; graphile-worker: "* * * * *" with fill), median of ${report.options.rounds} rounds`,
    formatTable(
      ['system', 'outage', 'missed', 'runs created', 'engine calls', 'decide ms', 'Ursa/graphile', 'one run'],
      rows,
      { textColumns: 2 },
    ),
    '',
    '- missed: occurrences due during the outage (Ursa every second; graphile-worker has minute granularity, so every minute)',
    "- decide ms: wall time of the first tick after the restart (claim, coalesce, start) for Ursa; of graphile-worker's cron start (its backfill, one job per missed minute, written) for graphile-worker",
    `- graphile-worker: a restart still backfilling after ${report.options.budget} s is killed (runs created: a lower bound) and not repeated; its backfilled jobs are counted in its queue, not run`,
    "- Ursa/graphile: Ursa's decide ms over graphile-worker's for the same outage",
    '- peers without catch-up: croner and node-cron keep no state across a restart; a BullMQ job scheduler holds one delayed job (at most one run after a restart); pg-boss sends an occurrence only within a minute of it',
  ].join('\n');
}
