import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { seeded } from './random.mjs';

/**
 * One Ursa worker of the soak (`soak/run.mjs` forks it with an IPC channel): Ursa through its
 * library API (`createUrsa`) on the store it is given, with the loop of `ursa worker` (the
 * `Worker` of dist/, so that fault points can be set), and the application engine `soak`.
 *
 * - Engine `soak`: first appends `<scheduler> <scheduledFor> <correlationId>` to this process's
 *   entries file (a write(2) per entry, so a SIGKILL right after loses nothing), then usually
 *   returns at once; with the probabilities of its params it throws (`failed`), runs slow
 *   (overlap policies get to decide), or runs past its recipe's `timeout` and ends `failed`.
 * - Messages from the driver: `{ type: 'arm', point, action }` makes the next pass through fault
 *   point `afterClaim` or `beforeEnd` SIGKILL this process there (`kill`) or throw Ursa's
 *   `SimulatedCrash` (`crash`: the step stops there, the worker lives on and must recover);
 *   `{ type: 'disarm' }`; `{ type: 'sample', gc }` answers `{ type: 'memory', … }`, after a full
 *   GC when `gc` (the process runs with --expose-gc); `{ type: 'stall', ms }` blocks this
 *   process's event loop for `ms` milliseconds (a synchronous busy-wait: no timer, no I/O, no
 *   lease renewal from the main thread meanwhile), then lets it go on.
 * - SIGTERM: the graceful stop of `ursa worker` (no new claims, running processes finish).
 *
 * argv[2]: JSON `{ dist, db, entries, seed, exclusive }`.
 */
const config = JSON.parse(process.argv[2]);
const load = (path) => import(pathToFileURL(join(config.dist, path)).href);
const { createUrsa } = await load('index.js');
const { Worker } = await load('runtime/worker.js');
const { SimulatedCrash } = await load('runtime/faults.js');

const random = seeded(config.seed);
const entries = openSync(config.entries, 'a');
const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
const rate = (value, fallback) => (typeof value === 'number' ? value : fallback);

async function soakEngine(run, signal) {
  writeSync(entries, `${run.scheduler} ${run.scheduledFor} ${run.correlationId}\n`);
  const p = run.params;
  const fail = rate(p.fail, 0.01);
  const slow = rate(p.slow, 0.005);
  const hang = rate(p.hang, 0.002);
  const r = random();
  if (r < fail) throw new Error('soak: injected engine failure');
  if (r < fail + slow) {
    const [min, max] = [rate(p.slowMinMs, 1200), rate(p.slowMaxMs, 2500)];
    await sleep(min + random() * (max - min), signal);
    return { output: 'slow' };
  }
  if (r < fail + slow + hang) {
    // An engine that does not answer: it is given up after the recipe's timeout.
    const limit = run.recipe.timeoutMs ?? 3000;
    await sleep(limit, signal);
    return signal.aborted ? undefined : { status: 'failed', reason: `timeout after ${limit} ms` };
  }
  return undefined;
}

const armed = new Map();
function faultPoint(point) {
  return () => {
    const action = armed.get(point);
    if (action === undefined) return;
    armed.delete(point);
    process.send?.({ type: 'fault', point, action });
    if (action === 'kill') process.kill(process.pid, 'SIGKILL');
    throw new SimulatedCrash(`soak: ${point}`);
  };
}

const ursa = await createUrsa({
  db: config.db,
  logger: 'warn',
  engines: { soak: soakEngine },
  // misfire: skip schedulers skip what is more than 2 s late (a restart's gap); the rest as default.
  settings: { misfireThresholdMs: 2000, shutdownGraceMs: 5000 },
});
const worker = new Worker(ursa.runtime, {
  exclusive: config.exclusive,
  faults: { afterClaim: faultPoint('afterClaim'), beforeEnd: faultPoint('beforeEnd') },
});
// SQLite: the store's one serving process; after a SIGKILL this waits for the dead one's lease.
if (config.exclusive) await worker.takeStore();
await worker.start();

let stopping = false;
process.on('SIGTERM', async () => {
  if (stopping) return;
  stopping = true;
  await worker.stop();
  await ursa.stop();
  closeSync(entries);
  process.exit(0);
});
process.on('message', (message) => {
  if (message.type === 'arm') armed.set(message.point, message.action);
  else if (message.type === 'disarm') armed.clear();
  else if (message.type === 'stall') {
    process.send?.({ type: 'fault', point: 'stall', action: 'stall' });
    const until = Date.now() + message.ms;
    while (Date.now() < until) {
      // the stall: the event loop turns no more until the busy-wait ends
    }
  } else if (message.type === 'sample') {
    if (message.gc) globalThis.gc?.();
    process.send?.({ type: 'memory', at: Date.now(), ...process.memoryUsage() });
  }
});
// The driver going away (its own crash) must not leave workers behind.
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
process.send?.({ type: 'ready', workerId: worker.id });
