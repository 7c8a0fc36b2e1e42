import { Logger, run } from 'graphile-worker';

/**
 * One graphile-worker process for the throughput scenario: `node graphile-runner.mjs <url>`.
 * A runner with a no-op task `noop`, configured as graphile-worker's performance page does for
 * throughput (24 concurrent jobs, a pool of 25, a local queue of 500, completions and failures
 * written without batching delay). Prints `ready` once it runs; SIGTERM stops it gracefully.
 */

const silent = new Logger(() => () => {});
const runner = await run({
  connectionString: process.argv[2],
  concurrency: 24,
  maxPoolSize: 25,
  noHandleSignals: true,
  logger: silent,
  taskList: { noop: async () => {} },
  preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
});
process.once('SIGTERM', () => {
  runner.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
process.stdout.write('ready\n');
await runner.promise;
