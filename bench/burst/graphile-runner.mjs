import { Logger, run } from 'graphile-worker';

/**
 * One graphile-worker process of the burst scenario: `node graphile-runner.mjs <url>`. Configured
 * as the throughput scenario's runners (graphile-worker's performance page), with a task `burst`
 * that notes when each job started. Prints `ready` once it runs; on SIGTERM it stops gracefully
 * and prints `{"jobs": n, "firstStart": ms, "lastStart": ms}` (epoch ms) as its last line.
 */

const silent = new Logger(() => () => {});
let jobs = 0;
let firstStart = null;
let lastStart = null;
const runner = await run({
  connectionString: process.argv[2],
  concurrency: 24,
  maxPoolSize: 25,
  noHandleSignals: true,
  logger: silent,
  taskList: {
    burst: async () => {
      const now = Date.now();
      jobs++;
      firstStart ??= now;
      lastStart = now;
    },
  },
  preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
});
process.once('SIGTERM', () => {
  runner.stop().then(
    () => {
      process.stdout.write(`${JSON.stringify({ jobs, firstStart, lastStart })}\n`);
      process.exit(0);
    },
    () => process.exit(1),
  );
});
process.stdout.write('ready\n');
await runner.promise;
