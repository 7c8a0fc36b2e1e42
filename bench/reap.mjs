import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultEngines } from '../dist/engines/index.js';
import { createLogger } from '../dist/log.js';
import { SimulatedCrash } from '../dist/runtime/faults.js';
import { Worker } from '../dist/runtime/worker.js';
import { applyDirectory } from '../dist/service/apply.js';
import { libraryActor } from '../dist/store/audit.js';
import { openStore, repositories } from '../dist/store/index.js';
import { fixedClock } from '../dist/time/clock.js';
import { positive, stores, usageError } from './lib/args.mjs';
import { median } from './lib/measure.mjs';
import { ursaSource } from './lib/setup.mjs';
import { formatTable } from './lib/table.mjs';
import { postgresServer } from './workers/postgres.mjs';
import { PROJECT, setAllNextRunAt, TENANT, writeSchedulerFolder } from './workers/store.mjs';

/**
 * Scenario `reap`: how long a worker's reap takes to take over the claims of a dead worker
 * (issue #20: 235 claimed runs of a dead worker resumed minutes late). Per store and round: a
 * fresh database with `--count` schedulers (noop recipe), all made due at one instant; a worker
 * claims them all and "dies" right after the claim (its fault point throws); once its lease has
 * lapsed (a fixed clock), a new worker's `reap()` is timed, and then the time until every run
 * has ended (noop runs end at once). The median of `--rounds` rounds. It asserts nothing.
 */

const DEFAULTS = { count: 1000, rounds: 3 };
const LEASE_MS = 5000;

function parseArgs(args) {
  const options = { ...DEFAULTS, stores: ['sqlite', 'postgresql'] };
  for (const arg of args) {
    const [flag, value] = arg.split(/=(.*)/s);
    if (value === undefined) throw usageError(`${arg}: expected ${flag}=<value>`);
    if (flag === '--count') options.count = positive(arg, value);
    else if (flag === '--rounds') options.rounds = positive(arg, value);
    else if (flag === '--stores') options.stores = stores(arg, value);
    else throw usageError(`unknown option ${arg}`);
  }
  return options;
}

class Died extends SimulatedCrash {}

/** One round on the store at `location`: the reap's wall time and the time until every run ended, ms. */
async function round(location, count) {
  const store = await openStore(location);
  try {
    const due = Math.ceil(Date.now() / 1000) * 1000;
    const clock = fixedClock(due);
    const rt = {
      repos: repositories(store),
      clock,
      settings: { misfireThresholdMs: 3_600_000, runLogRetentionDays: 7, shutdownGraceMs: 5_000 },
      engines: defaultEngines(),
      log: createLogger('silent'),
    };
    const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-reap-'));
    try {
      const folder = writeSchedulerFolder(dir, count, { everySecond: true });
      await applyDirectory(rt, folder, TENANT, PROJECT, libraryActor('bench'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await setAllNextRunAt(store, due);
    const register = (worker) =>
      rt.repos.workers.register({
        id: worker.id,
        host: hostname(),
        pid: process.pid,
        startedAt: clock.now(),
      });
    const dead = new Worker(rt, {
      leaseTtlMs: LEASE_MS,
      faults: { afterClaim: () => Promise.reject(new Died()) },
    });
    await register(dead);
    for (let claimed = 0; claimed < count; ) {
      await dead.tick().catch((error) => {
        if (!(error instanceof Died)) throw error;
      });
      claimed = (await rt.repos.runs.inState('claimed', count + 1)).length;
    }
    clock.advance(LEASE_MS + 1);
    const worker = new Worker(rt, { leaseTtlMs: LEASE_MS });
    await register(worker);
    const began = performance.now();
    const { resumed } = await worker.reap();
    const reapMs = performance.now() - began;
    await worker.executor.settled();
    const endedMs = performance.now() - began;
    const ended = await store.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('state', '=', 'ended')
      .executeTakeFirst();
    if (resumed !== count || Number(ended?.n) !== count)
      throw new Error(`reap: resumed ${resumed}, ended ${ended?.n} of ${count} runs`);
    await worker.stop();
    return { reapMs, endedMs };
  } finally {
    await store.close();
  }
}

/** Runs the scenario; the report is plain data. */
export async function run(args, { onProgress = () => {} } = {}) {
  const options = parseArgs(args);
  const results = [];
  for (const name of options.stores) {
    const samples = [];
    if (name === 'sqlite') {
      for (let i = 0; i < options.rounds; i++) {
        const dir = mkdtempSync(join(tmpdir(), 'ursa-bench-reap-db-'));
        try {
          samples.push(await round(join(dir, 'ursa.db'), options.count));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
        onProgress(`sqlite round ${i + 1}: reap ${samples.at(-1).reapMs.toFixed(0)} ms`);
      }
    } else {
      const server = await postgresServer(onProgress);
      try {
        for (let i = 0; i < options.rounds; i++) {
          const database = await server.createDatabase();
          try {
            samples.push(await round(database.url, options.count));
          } finally {
            await server.dropDatabase(database);
          }
          onProgress(`postgresql round ${i + 1}: reap ${samples.at(-1).reapMs.toFixed(0)} ms`);
        }
      } finally {
        await server.stop();
      }
    }
    results.push({
      store: name,
      count: options.count,
      rounds: options.rounds,
      reapMs: median(samples.map((s) => s.reapMs)),
      endedMs: median(samples.map((s) => s.endedMs)),
      samples,
    });
  }
  return { source: ursaSource(), results };
}

/** The report as text. */
export function format(report) {
  const rows = report.results.map((r) => [
    r.store,
    String(r.count),
    r.reapMs.toFixed(0),
    r.endedMs.toFixed(0),
    String(r.rounds),
  ]);
  return [
    `reap: a new worker takes over the claimed runs of a dead worker (${report.source})`,
    formatTable(['store', 'claimed runs', 'reap ms (median)', 'until all ended ms', 'rounds'], rows),
  ].join('\n');
}
