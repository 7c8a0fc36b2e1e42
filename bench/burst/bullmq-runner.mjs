import { Worker } from 'bullmq';
import IORedis from 'ioredis';

/**
 * One BullMQ process of the burst scenario: `node bullmq-runner.mjs <redis url> <queue>`: a Worker
 * with concurrency 100 whose processor notes when each job started (jobs removed on completion).
 * Prints `ready` once it runs; on SIGTERM it closes and prints
 * `{"jobs": n, "firstStart": ms, "lastStart": ms}` (epoch ms) as its last line.
 */

const [url, queue] = process.argv.slice(2);
const connection = new IORedis(url, { maxRetriesPerRequest: null });
let jobs = 0;
let firstStart = null;
let lastStart = null;
const worker = new Worker(
  queue,
  async () => {
    const now = Date.now();
    jobs++;
    firstStart ??= now;
    lastStart = now;
  },
  { connection, concurrency: 100, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
);
await worker.waitUntilReady();
process.once('SIGTERM', () => {
  worker.close().then(
    () => {
      process.stdout.write(`${JSON.stringify({ jobs, firstStart, lastStart })}\n`);
      connection.disconnect();
      process.exit(0);
    },
    () => process.exit(1),
  );
});
process.stdout.write('ready\n');
