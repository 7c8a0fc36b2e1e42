import { SelfFence } from '../fencing/self-fence.js';
import type { StoreHolder } from '../store/owner.js';
import type { Runtime } from './context.js';

/** How {@link takeStore} waits for a SQLite store's serving process. Milliseconds. */
export interface StoreWait {
  /** The lease (and takeover margin) a holder's heartbeat must be older than to be taken over. */
  readonly leaseMs: number;
  /** How long a holder whose lease has not lapsed is watched before this process is refused. */
  readonly waitMs: number;
  /** How often the holder is looked at meanwhile. */
  readonly pollMs: number;
}

/**
 * Makes `me` the one serving process of its SQLite store (decisions §5, see `Worker.takeStore`):
 * a holder whose lease has lapsed is taken over; one whose lease has not is watched for up to
 * `waitMs` — one that renews meanwhile is alive, and this process is refused at once; one that
 * does not is taken over when its lease lapses.
 *
 * @returns the `SelfFence.now()` instant the successful take was sent at (its lease's renewal).
 * @throws UrsaError `STORE_LOCKED` naming the holder when another process serves the store.
 */
export async function takeStore(
  rt: Runtime,
  me: { readonly id: string; readonly host: string; readonly pid: number },
  wait: StoreWait,
): Promise<bigint> {
  const { repos, clock, log } = rt;
  const deadline = performance.now() + wait.waitMs;
  let first: StoreHolder | undefined;
  for (;;) {
    const sent = SelfFence.now();
    const holder = await repos.owner.take(me, clock.now(), wait.leaseMs);
    if (holder === undefined) return sent;
    const left = deadline - performance.now();
    if (first === undefined) {
      first = holder;
      log.info(
        { holder: holder.workerId, host: holder.host, pid: holder.pid },
        'the SQLite store has a serving process: waiting to see it renew its lease or let it lapse',
      );
    } else if (holder.heartbeatAt !== first.heartbeatAt || holder.workerId !== first.workerId) {
      throw repos.owner.locked(holder);
    }
    if (left <= 0) throw repos.owner.locked(holder);
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait.pollMs, left)));
  }
}
