import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { positive, usageError } from './lib/args.mjs';
import { median } from './lib/measure.mjs';
import { formatTable } from './lib/table.mjs';
import { bullmq } from './peers/bullmq.mjs';
import { croner } from './peers/croner.mjs';
import { graphileWorker } from './peers/graphile-worker.mjs';
import { nodeCron } from './peers/node-cron.mjs';
import { pgBoss } from './peers/pg-boss.mjs';
import { ursa } from './peers/ursa.mjs';
import { postgresServer } from './workers/postgres.mjs';

/**
 * Fire precision, Ursa beside the schedulers its users would pick instead (issue #11), in one
 * process per system, one system at a time:
 * - one instant: `count` schedules due at the same boundary (a whole second for systems with
 *   second granularity, a whole minute for the others), each firing once;
 * - every second: `everyCount` schedules `* * * * * *` for `seconds` seconds (second-granular
 *   systems only).
 * Lateness = the handler's entry (its first statement reads the clock) − the nominal instant, ms.
 * Each system runs `rounds` rounds; a figure is the median over rounds of that round's figure.
 *
 * A system is `{ name, version, granularity: 'second'|'minute', store, open(ctx) }`; `open`
 * (ctx: `{ postgres, dir, ids }`, ids of the schedules to come, for what can be made ahead:
 * pg-boss's queues) resolves to `{ schedule(items, onFire), close() }`, where items are `{ id, cron }` and
 * `onFire(nominalMs | undefined, enteredMs)` is called at the handler's entry (an undefined
 * nominal instant is the entry's whole second: the in-process timers are far less than a second
 * late). Add a peer by adding a module to peers/ and to SYSTEMS.
 */
const SYSTEMS = {
  'ursa-sqlite': ursa('sqlite'),
  'ursa-postgresql': ursa('postgresql'),
  croner,
  'node-cron': nodeCron,
  bullmq,
  'graphile-worker': graphileWorker,
  'pg-boss': pgBoss,
};

const DEFAULTS = { count: 1000, everyCount: 1000, seconds: 30, rounds: 3, timeoutSeconds: 90 };
// Time to set up `count` schedules before the boundary they are due at (pg-boss's schedules and
// workers take the longest).
const SETUP_MS = { second: 10_000, minute: 30_000 };
const WARMUP_MS = 3000;

/** Targets of issue #11, p99 ms, by scenario and system. */
const TARGETS = {
  instant: { 'ursa-sqlite': 20, 'ursa-postgresql': 50 },
  every: { 'ursa-sqlite': 10 },
};

function parseArgs(args) {
  const options = { ...DEFAULTS, systems: Object.keys(SYSTEMS) };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (value === undefined) throw usageError(`${arg}: expected ${flag}=<value>`);
    if (flag === '--count') options.count = positive(arg, value);
    else if (flag === '--every-count') options.everyCount = positive(arg, value);
    else if (flag === '--seconds') options.seconds = positive(arg, value);
    else if (flag === '--rounds') options.rounds = positive(arg, value);
    else if (flag === '--systems') {
      options.systems = value.split(',');
      const unknown = options.systems.find((s) => !Object.hasOwn(SYSTEMS, s));
      if (unknown !== undefined) throw usageError(`${arg}: systems are ${Object.keys(SYSTEMS).join(', ')}`);
    } else throw usageError(`unknown option ${arg}`);
  }
  return options;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const ceilTo = (ms, step) => Math.ceil(ms / step) * step;
const id = (i) => `s${String(i).padStart(5, '0')}`;

/** The cron expression due exactly once a day, at `instant` (UTC), in the system's syntax. */
function dailyAt(instant, granularity) {
  const d = new Date(instant);
  const minute = `${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
  return granularity === 'second' ? `${d.getUTCSeconds()} ${minute}` : minute;
}

/** p50, p99 (nearest rank) and max of `values`, ms. */
function distribution(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { p50: null, p99: null, max: null };
  const rank = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { p50: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1] };
}

/** Polls until `done()` or `deadline` (epoch ms). */
async function until(done, deadline) {
  while (!done() && Date.now() < deadline) await sleep(25);
}

/** One round of "one instant": `count` schedules due at one boundary. */
async function oneInstant(system, ctx, count) {
  const step = system.granularity === 'second' ? 1000 : 60_000;
  const ids = Array.from({ length: count }, (_, i) => id(i));
  const instance = await system.open({ ...ctx, ids });
  const instant = ceilTo(Date.now() + SETUP_MS[system.granularity], step);
  const cron = dailyAt(instant, system.granularity);
  const lateness = [];
  try {
    await instance.schedule(
      ids.map((each) => ({ id: each, cron })),
      (_nominal, entered) => lateness.push(entered - instant),
    );
    const setupOverran = Date.now() >= instant;
    await until(() => lateness.length >= count, instant + DEFAULTS.timeoutSeconds * 1000);
    return { ...distribution(lateness), fired: lateness.length, expected: count, setupOverran };
  } finally {
    await instance.close();
  }
}

/** One round of "every second": `count` schedules `* * * * * *`, measured over `seconds` whole seconds. */
async function everySecond(system, ctx, count, seconds) {
  const lateness = [];
  let from = Number.POSITIVE_INFINITY;
  let to = Number.POSITIVE_INFINITY;
  const ids = Array.from({ length: count }, (_, i) => id(i));
  const instance = await system.open({ ...ctx, ids });
  try {
    await instance.schedule(
      ids.map((each) => ({ id: each, cron: '* * * * * *' })),
      (nominal, entered) => {
        const at = nominal ?? Math.floor(entered / 1000) * 1000;
        if (at >= from && at < to) lateness.push(entered - at);
      },
    );
    from = ceilTo(Date.now() + WARMUP_MS, 1000);
    to = from + seconds * 1000;
    const expected = count * seconds;
    await until(() => lateness.length >= expected, to + DEFAULTS.timeoutSeconds * 1000);
    return { ...distribution(lateness), fired: lateness.length, expected, setupOverran: false };
  } finally {
    await instance.close();
  }
}

/** The median over rounds of each figure; `missed` is the total not fired within the timeout. */
function summarize(rounds) {
  const pick = (key) => median(rounds.map((r) => r[key]).filter((v) => v !== null));
  return {
    rounds,
    p50: pick('p50'),
    p99: pick('p99'),
    max: pick('max'),
    missed: rounds.reduce((sum, r) => sum + (r.expected - r.fired), 0),
    setupOverran: rounds.some((r) => r.setupOverran),
  };
}

export async function run(args, { onProgress }) {
  const options = parseArgs(args);
  const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-precision-'));
  const postgres = await postgresServer(onProgress);
  const report = { options, postgres: postgres.source, instant: {}, every: {} };
  try {
    for (const key of options.systems) {
      const system = SYSTEMS[key];
      const scenarios = [['instant', (ctx) => oneInstant(system, ctx, options.count)]];
      if (system.granularity === 'second')
        scenarios.push(['every', (ctx) => everySecond(system, ctx, options.everyCount, options.seconds)]);
      for (const [scenario, measureRound] of scenarios) {
        const rounds = [];
        try {
          for (let r = 1; r <= options.rounds; r++) {
            onProgress(
              `${system.name}, ${scenario === 'instant' ? 'one instant' : 'every second'}: round ${r}/${options.rounds}`,
            );
            const round = await measureRound({ postgres, dir });
            onProgress(`  p99 ${round.p99} ms, ${round.fired}/${round.expected} fired`);
            rounds.push(round);
          }
          report[scenario][key] = { system: describe(system), ...summarize(rounds) };
        } catch (error) {
          onProgress(`${system.name}: ${error.message}`);
          report[scenario][key] = { system: describe(system), error: error.message };
        }
      }
    }
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

function describe(system) {
  return { name: system.name, version: system.version, granularity: system.granularity, store: system.store };
}

const cell = (value) => (value === null || value === undefined ? '-' : String(Math.round(value)));

function table(results, targets) {
  const ursa = results['ursa-sqlite'];
  const rows = Object.entries(results).map(([key, r]) => {
    if (r.error !== undefined)
      return [r.system.name, r.system.version, r.system.store, 'error', '-', '-', '-', '-', '-', '-'];
    const ratio =
      ursa?.p99 !== undefined && r.p99 > 0 && key !== 'ursa-sqlite' ? (ursa.p99 / r.p99).toFixed(2) : '-';
    const target = targets[key];
    return [
      r.system.name,
      r.system.version,
      r.system.store,
      r.system.granularity,
      cell(r.p50),
      cell(r.p99),
      cell(r.max),
      `${r.missed}${r.setupOverran ? ' (setup overran)' : ''}`,
      ratio,
      target === undefined ? '-' : `<= ${target} ms ${r.p99 <= target && r.missed === 0 ? 'met' : 'missed'}`,
    ];
  });
  return formatTable(
    [
      'system',
      'version',
      'store',
      'boundary',
      'p50',
      'p99',
      'max',
      'missed',
      'Ursa SQLite p99 / p99',
      'target p99',
    ],
    rows,
    { textColumns: 4 },
  );
}

export function format(report) {
  const { count, everyCount, seconds, rounds } = report.options;
  const lines = [
    `fire precision: lateness = handler entry − nominal instant (ms), median of ${rounds} rounds; PostgreSQL: ${report.postgres}`,
    '',
    `one instant: ${count} schedules due at the same boundary (a whole second where the system has seconds, else a whole minute)`,
    table(report.instant, TARGETS.instant),
  ];
  if (Object.keys(report.every).length > 0)
    lines.push(
      '',
      `every second: ${everyCount} schedules "* * * * * *" for ${seconds} s (second-granular systems)`,
      table(report.every, TARGETS.every),
    );
  lines.push(
    '',
    '- missed: occurrences not fired within 90 s of their instant (summed over rounds); a missed one is not in the percentiles',
    '- Ursa SQLite p99 / p99: below 1 means Ursa on SQLite fired its p99 earlier than that system',
  );
  return lines.join('\n');
}
