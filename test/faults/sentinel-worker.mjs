// A worker process as `ursa worker` runs one (issue #20, the sentinel), for sentinel.test.ts: on
// SQLite it takes the store first; it serves with the default lease (5 s), takeover margin (2 s)
// and fence grace (1 s) until SIGTERM, then stops cleanly and exits 0. Runs the built code
// (dist/): `npm run build` first.
//
// argv[2] is JSON: { db }. Prints `{"worker": <id>}` on standard output once it serves; logs at
// warn on standard error.
import { defaultEngines } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { Worker } from '../../dist/runtime/worker.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { systemClock } from '../../dist/time/clock.js';

const { db } = JSON.parse(process.argv[2]);
const store = await openStore(db);
const rt = {
  repos: repositories(store),
  clock: systemClock,
  settings: { misfireThresholdMs: 60_000, runLogRetentionDays: -1, shutdownGraceMs: 500 },
  engines: defaultEngines(),
  log: createLogger('warn', process.stderr),
};
const sqlite = store.dialect === 'sqlite';
const worker = new Worker(rt, { exclusive: sqlite, maxSleepMs: 200 });
process.once('SIGTERM', async () => {
  await worker.stop();
  await store.close();
  process.exit(0);
});
if (sqlite) await worker.takeStore();
await worker.start();
process.stdout.write(`${JSON.stringify({ worker: worker.id })}\n`);
