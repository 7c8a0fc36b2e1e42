import { assertRunning, sleep } from './processes.mjs';
import { unfinished, workerRows } from './store.mjs';

/** Waits of the scenarios that run `ursa worker` processes (workers, throughput). */

export const READY_TIMEOUT_MS = 240_000;
export const DRAIN_TIMEOUT_MS = 120_000;

/**
 * Polls `check` every `everyMs` until it returns true or `timeoutMs` passes; returns whether it
 * did. With `workers`, throws as soon as one of them has exited.
 */
export async function until(check, { everyMs, timeoutMs, workers }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (workers !== undefined) assertRunning(workers);
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/**
 * Waits until every worker renewed its lease at least 1 s after it registered: its start-up is
 * over. Returns the seconds from spawn to that renewal, per worker.
 */
export async function waitReady(store, workers) {
  const pids = workers.map((w) => w.pid);
  let rows = [];
  const ready = await until(
    async () => {
      rows = await workerRows(store, pids);
      return rows.length === pids.length && rows.every((r) => r.heartbeatAt >= r.startedAt + 1000);
    },
    { everyMs: 200, timeoutMs: READY_TIMEOUT_MS, workers },
  );
  if (!ready) throw new Error(`workers not ready after ${READY_TIMEOUT_MS / 1000} s`);
  return workers.map((w) => (rows.find((r) => r.pid === w.pid).heartbeatAt - w.spawnedAt) / 1000);
}

/**
 * Waits until the workers hold nothing in flight: no run claimed, queued or started. A count that
 * stays the same, above 0, for 3 s is a stuck run (see health), not a backlog: noop runs take ms.
 */
export async function drain(store, workers) {
  let last = -1;
  let since = Date.now();
  let stuck = 0;
  const done = await until(
    async () => {
      const n = await unfinished(store);
      if (n !== last) {
        last = n;
        since = Date.now();
      }
      stuck = n > 0 && Date.now() - since >= 3000 ? n : 0;
      return n === 0 || stuck > 0;
    },
    { everyMs: 250, timeoutMs: DRAIN_TIMEOUT_MS, workers },
  );
  return { drained: done && stuck === 0, stuck };
}
