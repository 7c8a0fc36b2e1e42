import { performance } from 'node:perf_hooks';
import { formatMachine, machine } from './lib/machine.mjs';
import { buildUrsa, ensureDependencies } from './lib/setup.mjs';

/**
 * `npm run bench -- [scenario ...] [--json] [scenario flags]`: installs the benchmark's own
 * dependencies, builds Ursa, then runs the named scenarios (all of them when none is named).
 * A scenario is a module exporting `run(args, { onProgress })` → report (plain data, printed as
 * is by `--json`) and `format(report)` → text; add one by adding it to SCENARIOS (`peers: false`
 * when it needs none of bench/'s own dependencies). Progress goes to stderr, results to stdout.
 */

const SCENARIOS = {
  cron: {
    module: './cron.mjs',
    description: 'next() calls per second, Ursa beside croner and cron-parser',
    flags: ['--slowest'], // --slowest[=N]: also list Ursa's N slowest corpus entries
  },
  precision: {
    module: './precision.mjs',
    description:
      'fire lateness of 1,000 schedules at one instant and every second: Ursa (SQLite, PostgreSQL) beside croner, node-cron, BullMQ, graphile-worker, pg-boss',
    // --count=N (1000), --every-count=N (1000), --seconds=N (30), --rounds=N (3), --systems=a,b
    flags: ['--count', '--every-count', '--seconds', '--rounds', '--systems'],
  },
  catchup: {
    module: './catchup.mjs',
    description:
      "runs created and time to decide after an outage of 1 hour, 1 day, 10 years: Ursa (SQLite, PostgreSQL) beside graphile-worker's backfill",
    // --rounds=N (5), --budget=S graphile-worker's time per restart (60), --systems=ursa,graphile-worker
    flags: ['--rounds', '--budget', '--systems'],
  },
  scale: {
    module: './scale.mjs',
    description: 'bootstrap, memory and tick cost with 10,000, 100,000 and 1,000,000 schedulers',
    flags: ['--sizes'], // --sizes=10000,100000,1000000
  },
  workers: {
    module: './workers.mjs',
    description:
      'claims per second and fire lateness of ursa worker processes with 10,000 schedulers (PostgreSQL 1/2/4, SQLite 1)',
    // --seconds=N window (30), --warmup=N (5), --rounds=N capacity rounds (3), --capacity-seconds=N
    // (5), --schedulers=N (10000), --workers=1,2,4 (PostgreSQL), --stores=postgresql,sqlite,
    // --trace (workers log at info: claims attempted vs won)
    flags: [
      '--seconds',
      '--warmup',
      '--rounds',
      '--capacity-seconds',
      '--schedulers',
      '--workers',
      '--stores',
      '--trace',
    ],
  },
  templates: {
    module: './templates.mjs',
    description:
      "event-loop hold of the worst workflow templates found, rendered as one step's params under the default limits",
    flags: ['--rounds'], // --rounds=N renders per template (20)
    peers: false,
  },
  reap: {
    module: './reap.mjs',
    description:
      "a new worker's reap of a dead worker's claimed runs: wall time of the reap and until every run ended (SQLite, PostgreSQL)",
    flags: ['--count', '--rounds', '--stores'], // --count=N claimed runs (1000), --rounds=N (3)
    peers: false,
  },
  burst: {
    module: './burst.mjs',
    description:
      'the top of the hour: 100,000 schedulers due at one instant, time until the last started and ended (SQLite 1, PostgreSQL 1/2/4 workers) beside graphile-worker and BullMQ',
    // --schedulers=N (100000), --projects=N (100), --workers=1,2,4, --stores=postgresql,sqlite,
    // --systems=ursa,graphile-worker,bullmq, --timeout=S per configuration (300)
    flags: ['--schedulers', '--projects', '--workers', '--stores', '--systems', '--timeout'],
  },
  throughput: {
    module: './throughput.mjs',
    description:
      'sustained runs per second end to end, noop engine (SQLite 1, PostgreSQL 1/2/4 workers) beside graphile-worker jobs/s',
    // --seconds=N window (20), --warmup=N (5), --rounds=N (3), --schedulers=N every second (5000),
    // --workers=1,2,4, --stores=postgresql,sqlite, --systems=ursa,graphile-worker, --jobs=N
    // graphile-worker's queue per round (400000)
    flags: [
      '--seconds',
      '--warmup',
      '--rounds',
      '--schedulers',
      '--workers',
      '--stores',
      '--systems',
      '--jobs',
    ],
  },
};

function usage() {
  const names = Object.entries(SCENARIOS)
    .map(([name, s]) => `\n  ${name}: ${s.description}`)
    .join('');
  const flags = [...new Set(Object.values(SCENARIOS).flatMap((s) => s.flags))].join(', ');
  return `usage: npm run bench -- [scenario ...] [--json] [${flags}]\nscenarios:${names}`;
}

function fail(message) {
  process.stderr.write(`bench: ${message}\n${usage()}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const json = args.includes('--json');
const names = args.filter((arg) => !arg.startsWith('--'));
const flags = args.filter((arg) => arg.startsWith('--') && arg !== '--json');
for (const name of names) {
  if (!Object.hasOwn(SCENARIOS, name)) fail(`unknown scenario ${JSON.stringify(name)}`);
}
const selected = names.length > 0 ? [...new Set(names)] : Object.keys(SCENARIOS);
for (const flag of flags) {
  const known = selected.some((name) => SCENARIOS[name].flags.includes(flag.split('=')[0]));
  if (!known) fail(`unknown option ${flag} for ${selected.join(', ')}`);
}

const started = performance.now();
try {
  if (selected.some((name) => SCENARIOS[name].peers !== false)) ensureDependencies();
  buildUrsa();
} catch (error) {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(1);
}

const info = machine();
const reports = {};
if (!json) process.stdout.write(`${formatMachine(info)}\n`);
for (const name of selected) {
  // Imported only now: scenarios load the peers and dist/, which the steps above provide.
  const scenario = await import(SCENARIOS[name].module);
  const onProgress = (message) => process.stderr.write(`bench ${name}: ${message}\n`);
  let report;
  try {
    report = await scenario.run(flags, { onProgress });
  } catch (error) {
    if (error.usage) fail(error.message);
    throw error;
  }
  reports[name] = report;
  if (!json) process.stdout.write(`\n${scenario.format(report)}\n`);
}
const seconds = (performance.now() - started) / 1000;
if (json)
  process.stdout.write(`${JSON.stringify({ machine: info, seconds, scenarios: reports }, null, 2)}\n`);
else process.stdout.write(`\nbench: finished in ${seconds.toFixed(1)} s\n`);
