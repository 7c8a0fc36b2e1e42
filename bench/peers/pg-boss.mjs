import PgBoss from 'pg-boss';
import { versionOf } from './versions.mjs';

/**
 * pg-boss: one queue per schedule (a v10 schedule is keyed by its queue's name), `schedule()` on
 * each and a `work()` per queue at the lowest polling interval it accepts (0.5 s); its cron
 * worker and monitor at their lowest interval (1 s). Minute granularity.
 */
export const pgBoss = {
  name: 'pg-boss',
  version: versionOf('pg-boss'),
  granularity: 'minute',
  store: 'PostgreSQL',
  async open({ postgres, ids }) {
    const database = await postgres.createDatabase();
    const boss = new PgBoss({
      connectionString: database.url,
      cronWorkerIntervalSeconds: 1,
      cronMonitorIntervalSeconds: 1,
      max: 10,
    });
    boss.on('error', () => {});
    await boss.start();
    // Each v10 queue is a partition table: made before the instant is chosen.
    for (const id of ids) await boss.createQueue(id);
    return {
      async schedule(items, onFire) {
        for (const { id, cron } of items) await boss.schedule(id, cron, {}, { tz: 'UTC' });
        for (const { id } of items)
          await boss.work(id, { pollingIntervalSeconds: 0.5 }, async () => {
            onFire(undefined, Date.now());
          });
      },
      async close() {
        await boss.stop({ graceful: false, wait: true, close: true });
        await postgres.dropDatabase(database);
      },
    };
  },
};
