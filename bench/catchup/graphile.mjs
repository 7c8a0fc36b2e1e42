import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations } from 'graphile-worker';
// Ursa's own driver (resolved from the root), as bench/workers/postgres.mjs uses it: the benchmark's
// side only sets the outage up and counts the jobs; the backfill is graphile-worker's.
import { withClient } from '../workers/postgres.mjs';

const RUNNER = fileURLToPath(new URL('./graphile-runner.mjs', import.meta.url));
const silent = new Logger(() => () => {});

/**
 * Runs graphile-runner.mjs until it reports its cron started or `budgetMs` (wall time) passed,
 * then kills it. Returns its last report: `{ backfilled, decideMs? , done? }`.
 */
async function restart(url, outageMs, budgetMs) {
  const child = spawn(process.execPath, [RUNNER, url, String(outageMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let last = { backfilled: 0 };
  const timer = setTimeout(() => child.kill('SIGKILL'), budgetMs);
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      last = JSON.parse(line);
      if (last.done) break;
    }
  } finally {
    clearTimeout(timer);
    child.kill('SIGKILL');
    await exited;
  }
  return last;
}

/**
 * graphile-worker's catch-up after an outage of `outageMs` (issue #11): on a fresh database of
 * `server`, its crontab item `* * * * *` is known and was last executed `outageMs` ago; a runner
 * starts with `fill` covering the outage. Measured: the jobs its backfill added (one per missed
 * minute) and the time from its cron starting to its cron started (the backfill, decided and
 * written). A backfill still going after `budgetMs` is killed: `finished` is false, `decideMs`
 * is undefined and `runs` counts the jobs added by then (a lower bound).
 */
export async function graphileCatchUp({ server, outageMs, budgetMs }) {
  const database = await server.createDatabase();
  try {
    await runMigrations({ connectionString: database.url, logger: silent });
    await withClient(database.url, (c) =>
      c.query(
        `insert into graphile_worker._private_known_crontabs (identifier, known_since, last_execution)
         values ('every-minute', now() - $1 * interval '1 millisecond', now() - $1 * interval '1 millisecond')`,
        [outageMs],
      ),
    );
    const report = await restart(database.url, outageMs, budgetMs);
    const runs = await withClient(database.url, async (c) => {
      const { rows } = await c.query(
        `select count(*)::int as n from graphile_worker._private_jobs
         where (payload -> '_cron' ->> 'backfilled')::boolean`,
      );
      return rows[0].n;
    });
    return { runs, finished: report.done === true, decideMs: report.done ? report.decideMs : undefined };
  } finally {
    await server.dropDatabase(database);
  }
}
