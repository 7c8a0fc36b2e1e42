import type { Runtime } from '../runtime/context.js';

/** How recent a worker's lease must be for it to count as running (its heartbeat is every second), ms. */
const LIVE_WORKER_MS = 5_000;

/** Whether a worker holds a lease renewed within the last 5 seconds (one that will start a fired run). */
export async function workerRunning(rt: Pick<Runtime, 'repos' | 'clock'>): Promise<boolean> {
  return (await rt.repos.workers.live(rt.clock.now(), LIVE_WORKER_MS)).length > 0;
}
