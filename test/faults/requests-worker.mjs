// A worker process on a short lease (issue #20 lease watchdog), for watchdog-requests.test.ts: it
// serves until SIGTERM, then stops cleanly. Runs the built code (dist/): `npm run build` first.
//
// argv[2] is JSON: { db, lease, blockMs, at } — `lease` holds the Worker options heartbeatMs,
// leaseTtlMs, takeoverMarginMs and fenceGraceMs. Its event loop is blocked for `blockMs` (a
// synchronous busy-wait), once, where `at` says:
//   'signal'     when the process gets SIGUSR2 (the test sends it once its runs are in flight);
//   'pre-entry'  in the single start path, after a run was registered as running and before its
//                engine is entered (right before the start's `ready` → `running` transition is
//                sent); every run takes that path here.
// Prints `{"worker": <id>}` on standard output once it serves, `blocking` and `unblocked` around
// the block; logs at warn on standard error.
import { defaultEngines } from '../../dist/engines/index.js';
import { createLogger } from '../../dist/log.js';
import { busyWait } from '../../dist/runtime/faults.js';
import { Worker } from '../../dist/runtime/worker.js';
import { openStore, repositories } from '../../dist/store/index.js';
import { systemClock } from '../../dist/time/clock.js';

const { db, lease, blockMs, at } = JSON.parse(process.argv[2]);
const store = await openStore(db);
const rt = {
  repos: repositories(store),
  clock: systemClock,
  settings: { misfireThresholdMs: 60_000, runLogRetentionDays: -1, shutdownGraceMs: 500 },
  engines: defaultEngines(),
  log: createLogger('warn', process.stderr),
};
let blocked = false;
const block = () => {
  if (blocked) return;
  blocked = true;
  process.stdout.write('blocking\n');
  busyWait(blockMs);
  process.stdout.write('unblocked\n');
};
let faults = {};
if (at === 'signal') process.once('SIGUSR2', block);
if (at === 'pre-entry') {
  // A fault at the start of every dispatch sends every run through the single start path.
  faults = { beforeSpawn: () => {} };
  const processes = rt.repos.processes;
  const transition = processes.transition.bind(processes);
  processes.transition = (id, from, values, fence) => {
    if (from.length === 1 && from[0] === 'ready' && values.status === 'running') block();
    return transition(id, from, values, fence);
  };
}
const worker = new Worker(rt, { ...lease, maxSleepMs: 200, faults });
await worker.start();
process.stdout.write(`${JSON.stringify({ worker: worker.id })}\n`);
process.once('SIGTERM', async () => {
  await worker.stop();
  await store.close();
  process.exit(0);
});
