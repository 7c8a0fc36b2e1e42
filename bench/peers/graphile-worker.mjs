import { Logger, parseCronItems, run } from 'graphile-worker';
import { versionOf } from './versions.mjs';

const silent = new Logger(() => () => {});

/**
 * graphile-worker: one crontab item per schedule (`parsedCronItems`), one runner with
 * concurrency 10 (its pool size); jobs reach it through LISTEN/NOTIFY. The nominal instant is the
 * `_cron.ts` it puts in each job's payload. Minute granularity.
 */
export const graphileWorker = {
  name: 'graphile-worker',
  version: versionOf('graphile-worker'),
  granularity: 'minute',
  store: 'PostgreSQL',
  async open({ postgres }) {
    const database = await postgres.createDatabase();
    let runner;
    return {
      async schedule(items, onFire) {
        runner = await run({
          connectionString: database.url,
          concurrency: 10,
          noHandleSignals: true,
          logger: silent,
          taskList: {
            probe: async (payload) => {
              onFire(Date.parse(payload._cron.ts), Date.now());
            },
          },
          parsedCronItems: parseCronItems(
            items.map(({ id, cron }) => ({ task: 'probe', match: cron, identifier: id })),
          ),
        });
      },
      async close() {
        await runner?.stop();
        await postgres.dropDatabase(database);
      },
    };
  },
};
