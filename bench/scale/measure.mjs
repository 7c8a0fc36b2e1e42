import { performance } from 'node:perf_hooks';
import { createUrsa, fixedClock } from '../../dist/index.js';
import { Worker } from '../../dist/runtime/worker.js';

/**
 * One size of the scale scenario, in its own process so that its memory is its own:
 * `node scale/measure.mjs <store> <count> <at>` prints one JSON line: the worker's bootstrap
 * (every project refreshed), RSS after it, the median tick when nothing is due, and the ticks that
 * claim and start 1% of the schedulers made due at one instant.
 */
const [location, countArg, atArg] = process.argv.slice(2);
const count = Number(countArg);
const at = Number(atArg);
const clock = fixedClock(at + 1);
const ursa = await createUrsa({ db: location, clock, logger: 'error' });
const worker = new Worker(ursa.runtime, { exclusive: true });

let started = performance.now();
await worker.bootstrap();
const bootstrapMs = performance.now() - started;
globalThis.gc?.();
const rssMiB = process.memoryUsage().rss / 2 ** 20;

const idle = [];
for (let i = 0; i < 21; i++) {
  started = performance.now();
  const tick = await worker.tick();
  idle.push(performance.now() - started);
  if (tick.claimed !== 0) throw new Error(`an idle tick claimed ${tick.claimed}`);
}
idle.sort((a, b) => a - b);

// 1% due at one instant: every 100th scheduler.
const due = at + 3_600_000 + 500;
const dueCount = Math.floor(count / 100);
const db = ursa.repos.store.db;
for (let i = 0; i < count; i += 100 * 1000) {
  const names = [];
  for (let k = i; k < Math.min(count, i + 100 * 1000); k += 100) names.push(`s${k}`);
  await db.updateTable('schedule_state').set({ next_run_at: due }).where('name', 'in', names).execute();
}
clock.set(due);
started = performance.now();
let claimed = 0;
let ticks = 0;
while (claimed < dueCount) {
  const tick = await worker.tick();
  claimed += tick.claimed;
  ticks++;
  if (tick.claimed === 0) break;
}
const claimMs = performance.now() - started;
await worker.executor.settled();
const dueMs = performance.now() - started;
await worker.stop();
await ursa.stop();
process.stdout.write(
  `${JSON.stringify({ count, bootstrapMs, rssMiB, idleTickMs: idle[10], dueCount, claimed, ticks, claimMs, dueMs })}\n`,
);
