import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createUrsa } from '../../dist/index.js';

const RECIPE = 'description: benchmark probe\nengine: probe\n';

/**
 * Ursa through its library API (`createUrsa`), on a fresh SQLite file or PostgreSQL database:
 * one scheduler document per schedule (applied, so each is validated), the default settings
 * (every run writes its feed lines and run log), and an application engine `probe` whose entry
 * is the measured instant, against the run's `scheduledFor`.
 */
export function ursa(store) {
  return {
    name: `Ursa (${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`,
    version: 'this checkout',
    granularity: 'second',
    store: store === 'sqlite' ? 'SQLite file' : 'PostgreSQL',
    async open({ postgres, dir }) {
      const database = store === 'sqlite' ? undefined : await postgres.createDatabase();
      const folder = join(dir, `ursa-${Date.now()}`);
      let fire = () => {};
      const instance = await createUrsa({
        db: database?.url ?? `${folder}.db`,
        logger: 'warn',
        engines: {
          probe: (context) => {
            fire(context.scheduledFor, Date.now());
          },
        },
      });
      return {
        async schedule(items, onFire) {
          fire = onFire;
          mkdirSync(join(folder, '_vance', 'recipes'), { recursive: true });
          mkdirSync(join(folder, '_vance', 'scheduler'), { recursive: true });
          writeFileSync(join(folder, '_vance', 'recipes', 'probe.yaml'), RECIPE);
          for (const { id, cron } of items)
            writeFileSync(
              join(folder, '_vance', 'scheduler', `${id}.yaml`),
              `description: probe\ncron: "${cron}"\ntimezone: UTC\nrecipe: probe\n`,
            );
          await instance.apply(folder);
          await instance.start();
        },
        async close() {
          await instance.stop();
          if (database !== undefined) await postgres.dropDatabase(database);
        },
      };
    },
  };
}
