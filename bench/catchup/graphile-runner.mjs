import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Logger, parseCronItems, run } from 'graphile-worker';

/**
 * graphile-worker's catch-up, one restart: `node graphile-runner.mjs <url> <backfillMs>`.
 * One crontab item, `* * * * *` (its granularity is the minute) with `fill` = the outage, the
 * backfill its documentation offers for occurrences missed while no worker ran. The database
 * already knows the item, last executed when the outage began (graphile.mjs sets that up).
 * Prints JSON lines on stdout: `{"backfilled":N}` as jobs are added (at most every 250 ms), then
 * `{"done":true,"backfilled":N,"decideMs":M}` when its cron has started, i.e. the backfill is
 * decided and written. The parent kills it after that, or after its time budget.
 */

const [url, backfillMs] = [process.argv[2], Number(process.argv[3])];
const silent = new Logger(() => () => {});
const events = new EventEmitter();
let started = 0;
let backfilled = 0;
let reported = 0;
events.on('cron:starting', () => {
  started = performance.now();
});
events.on('cron:backfill', ({ itemsToBackfill }) => {
  backfilled += itemsToBackfill.length;
  if (performance.now() - reported >= 250) {
    reported = performance.now();
    process.stdout.write(`${JSON.stringify({ backfilled })}\n`);
  }
});
events.on('cron:started', () => {
  const decideMs = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ done: true, backfilled, decideMs })}\n`);
});
await run({
  connectionString: url,
  concurrency: 1,
  noHandleSignals: true,
  logger: silent,
  events,
  // No task `probe` here: the backfilled jobs stay in the queue to be counted, and running them
  // does not slow the backfill down (the measure favours graphile-worker).
  taskList: { other: async () => {} },
  parsedCronItems: parseCronItems([
    {
      task: 'probe',
      match: '* * * * *',
      identifier: 'every-minute',
      options: { backfillPeriod: backfillMs },
    },
  ]),
});
