import { performance } from 'node:perf_hooks';

/**
 * Throughput of several subjects measured side by side in one process.
 *
 * A subject is `{ name, calls, sweep }`: one `sweep()` makes `calls` calls. Each subject is first
 * warmed up (so the JIT has optimised it) and calibrated to the number of sweeps that lasts at
 * least `minRoundMs`; then every round times each subject once, in an order that rotates per
 * round so that slow drift of the machine (heat, other load) is shared out evenly. The median over
 * rounds resists the odd round disturbed by garbage collection or another process.
 *
 * @returns per subject name: `{ median, rates, sweeps }`, rates in calls per second.
 */
export function measure(subjects, { rounds = 7, minRoundMs = 200, warmupMs = 300, onProgress } = {}) {
  const sweeps = new Map();
  for (const subject of subjects) {
    onProgress?.(`warming up ${subject.name}`);
    sweeps.set(subject.name, calibrate(subject.sweep, warmupMs, minRoundMs));
  }
  const rates = new Map(subjects.map((subject) => [subject.name, []]));
  for (let round = 0; round < rounds; round++) {
    onProgress?.(`round ${round + 1}/${rounds}`);
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(round + k) % subjects.length];
      const count = sweeps.get(subject.name);
      const ms = timeSweeps(subject.sweep, count);
      rates.get(subject.name).push((count * subject.calls * 1000) / ms);
    }
  }
  const result = {};
  for (const subject of subjects) {
    const list = rates.get(subject.name);
    result[subject.name] = { median: median(list), rates: list, sweeps: sweeps.get(subject.name) };
  }
  return result;
}

function timeSweeps(sweep, count) {
  const start = performance.now();
  for (let i = 0; i < count; i++) sweep();
  return performance.now() - start;
}

/** Runs `sweep` for about `warmupMs`, then returns how many sweeps last `minRoundMs`. */
function calibrate(sweep, warmupMs, minRoundMs) {
  let count = 0;
  const start = performance.now();
  do {
    sweep();
    count++;
  } while (performance.now() - start < warmupMs);
  // Time the warmed-up code once more: the first sweeps ran partly unoptimised.
  const ms = timeSweeps(sweep, count) / count;
  return Math.max(1, Math.ceil(minRoundMs / ms));
}

/**
 * Time per call of `fn` alone, in microseconds: batches double until one lasts `minBatchMs`,
 * then the median of `repeats` such batches.
 */
export function timePerCall(fn, { minBatchMs = 2, repeats = 3 } = {}) {
  let batch = 1;
  while (timeSweeps(fn, batch) < minBatchMs) batch *= 2;
  const samples = [];
  for (let i = 0; i < repeats; i++) samples.push((timeSweeps(fn, batch) * 1000) / batch);
  return median(samples);
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
