import cron from 'node-cron';
import { versionOf } from './versions.mjs';

/** node-cron: in-process timers, one task per schedule; seconds supported. */
export const nodeCron = {
  name: 'node-cron',
  version: versionOf('node-cron'),
  granularity: 'second',
  store: 'none (in-process timers)',
  async open() {
    const tasks = [];
    return {
      async schedule(items, onFire) {
        for (const { cron: expression } of items)
          tasks.push(
            cron.schedule(
              expression,
              () => {
                onFire(undefined, Date.now());
              },
              { timezone: 'UTC' },
            ),
          );
      },
      async close() {
        for (const task of tasks) await task.destroy();
      },
    };
  },
};
