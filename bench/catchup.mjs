import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createUrsa, fixedClock } from '../dist/index.js';
import { Worker } from '../dist/runtime/worker.js';
import { usageError } from './lib/args.mjs';
import { median } from './lib/measure.mjs';
import { formatTable } from './lib/table.mjs';
import { postgresServer } from './workers/postgres.mjs';

/**
 * Catch-up after an outage (issue #11, decisions §4): a per-second scheduler (`misfire: once`,
 * the default) whose process was down for one hour, one day or ten years. The store's state is
 * left as the outage left it: registered at T0, the clock then jumps to T0 + outage and a worker
 * starts. Reported: runs created for the backlog (must be 1: the backlog is coalesced into one
 * run) and the time of the tick that decides it (claim, coalesce, start), which must not grow with
 * the outage. The clock is a stepped one, so the outage costs no wall time.
 *
 * Peers: croner and node-cron keep no state across a restart; a BullMQ job scheduler holds one
 * delayed job, so a restart runs at most that one; pg-boss sends an occurrence only within a
 * minute of it; graphile-worker backfills one job per missed minute within `backfillPeriod` (not
 * measured here yet).
 */
const OUTAGES = [
  ['1 hour', 3_600_000],
  ['1 day', 86_400_000],
  ['10 years', 10 * 365.25 * 86_400_000],
];
const DEFAULTS = { rounds: 5 };
const T0 = Date.parse('2026-01-01T00:00:00Z');

function parseArgs(args) {
  const options = { ...DEFAULTS };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    const n = Number(value);
    if (flag === '--rounds' && Number.isInteger(n) && n >= 1) options.rounds = n;
    else throw usageError(`unknown option ${arg} (--rounds=N)`);
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
  const report = { options, postgres: postgres.source, rows: [] };
  try {
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
          runs: Math.max(...rounds.map((r) => r.runs)),
          entered: Math.max(...rounds.map((r) => r.entered)),
          decideMs: median(rounds.map((r) => r.decideMs)),
        };
        onProgress(`${store}, outage ${label}: ${row.runs} run(s), decided in ${row.decideMs.toFixed(1)} ms`);
        report.rows.push(row);
      }
    }
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

export function format(report) {
  const rows = report.rows.map((r) => [
    r.store === 'sqlite' ? 'Ursa (SQLite)' : 'Ursa (PostgreSQL)',
    r.outage,
    String(r.runs),
    String(r.entered),
    r.decideMs.toFixed(1),
    r.runs === 1 ? 'yes' : 'NO',
  ]);
  return [
    `catch-up: a "* * * * * *" scheduler after an outage (misfire: once), median of ${report.options.rounds} rounds`,
    formatTable(['system', 'outage', 'runs created', 'engine calls', 'decide ms', 'one run'], rows, {
      textColumns: 2,
    }),
    '',
    '- decide ms: the first tick after the restart (claim, coalesce, start), wall time; runs created: the most over rounds',
    '- peers: croner and node-cron keep no state across a restart; a BullMQ job scheduler holds one delayed job (at most one run after a restart); pg-boss sends an occurrence only within a minute of it; graphile-worker backfills one job per missed minute within backfillPeriod (not measured here)',
  ].join('\n');
}
