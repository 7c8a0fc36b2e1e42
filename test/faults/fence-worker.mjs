// A worker process on a short lease (issue #20 self-fencing), for self-fence.test.ts: it serves
// until SIGTERM, then stops cleanly. Runs the built code (dist/): `npm run build` first.
//
// argv[2] is JSON: { db, lease, block } — `lease` holds the Worker options heartbeatMs,
// leaseTtlMs, takeoverMarginMs and fenceGraceMs; `block`, if set, is { ms, lock }: right after a
// run entered its engine, the worker that creates the folder `lock` first (of all the workers
// given it) blocks its event loop for `ms` (a synchronous busy-wait), once.
// Prints `{"worker": <id>}` on standard output once it serves; logs at warn on standard error.
import { mkdirSync } from 'node:fs';
import { defaultEngines } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { busyWait } from '../../dist/runtime/faults.js';
import { Worker } from '../../dist/runtime/worker.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { systemClock } from '../../dist/time/clock.js';

const { db, lease, block } = JSON.parse(process.argv[2]);
const store = await openStore(db);
const rt = {
  repos: repositories(store),
  clock: systemClock,
  settings: { misfireThresholdMs: 60_000, runLogRetentionDays: -1, shutdownGraceMs: 500 },
  engines: defaultEngines(),
  log: createLogger('warn', process.stderr),
};
const first = () => {
  try {
    mkdirSync(block.lock);
    return true;
  } catch {
    return false;
  }
};
const faults = block === undefined ? {} : { afterStart: () => first() && busyWait(block.ms) };
const worker = new Worker(rt, { ...lease, maxSleepMs: 200, faults });
await worker.start();
process.stdout.write(`${JSON.stringify({ worker: worker.id })}\n`);
process.once('SIGTERM', async () => {
  await worker.stop();
  await store.close();
  process.exit(0);
});
