import { Logger, parseCronItems, run } from 'graphile-worker';
// graphile-worker's own dependency: the pool is made here so that its errors have a listener.
import pg from 'pg';
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
    // A connection the server ends (the database dropped at close, a restart) must not crash the
    // benchmark: graphile-worker's own pool crashed it once ("terminating connection due to
    // administrator command", an unhandled 'error' event).
    const pool = new pg.Pool({ connectionString: database.url, max: 11 });
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    let runner;
    return {
      async schedule(items, onFire) {
        runner = await run({
          pgPool: pool,
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
        await pool.end();
        await postgres.dropDatabase(database);
      },
    };
  },
};
