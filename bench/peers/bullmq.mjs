import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { versionOf } from './versions.mjs';

const REDIS_URL = process.env.URSA_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * BullMQ: one job scheduler per schedule (`upsertJobScheduler`, the API for repeatable jobs since
 * 5.16) on one queue, one Worker with concurrency 100, on the machine's Redis through ioredis
 * (`maxRetriesPerRequest: null`, as BullMQ requires for workers). The nominal instant of a job is
 * the `prevMillis` its scheduler set.
 */
export const bullmq = {
  name: 'BullMQ',
  version: `${versionOf('bullmq')} (ioredis ${versionOf('ioredis')})`,
  granularity: 'second',
  store: `Redis ${REDIS_URL}`,
  async open() {
    const connection = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
    const name = `ursa-bench-${process.pid}-${Date.now()}`;
    const queue = new Queue(name, { connection });
    let worker;
    return {
      async schedule(items, onFire) {
        worker = new Worker(
          name,
          async (job) => {
            onFire(job.opts.prevMillis, Date.now());
          },
          { connection, concurrency: 100, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
        );
        for (const { id, cron } of items)
          await queue.upsertJobScheduler(id, { pattern: cron, tz: 'UTC' }, { name: 'probe' });
      },
      async close() {
        await worker?.close();
        await queue.obliterate({ force: true });
        await queue.close();
        connection.disconnect();
      },
    };
  },
};
