import { Cron } from 'croner';
import { versionOf } from './versions.mjs';

/** croner: in-process timers, one `Cron` per schedule (its documented use); seconds supported. */
export const croner = {
  name: 'croner',
  version: versionOf('croner'),
  granularity: 'second',
  store: 'none (in-process timers)',
  async open() {
    const jobs = [];
    return {
      async schedule(items, onFire) {
        for (const { cron } of items)
          jobs.push(
            new Cron(cron, { timezone: 'UTC' }, () => {
              onFire(undefined, Date.now());
            }),
          );
      },
      async close() {
        for (const job of jobs) job.stop();
      },
    };
  },
};
