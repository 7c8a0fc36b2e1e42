import type { LaneResult } from '../store/lane-records.js';

/** A manual fire a lane said to judge first (`LaneResult.first`). */
export interface FirstFire {
  readonly correlationId: string;
  readonly workerId: string | null;
}

/**
 * How many times one admission yields to earlier manual fires before it is decided regardless:
 * more than a burst of fires requested within one claim-ahead window, few enough that a fire
 * whose lane cannot judge it (its dispatch failing over and over) holds nothing up for long.
 */
export const MAX_YIELDS = 8;

/**
 * Admits a run in the order of request and occurrence instants (issue #20): `admit` asks the
 * lane (`yielding` false once {@link MAX_YIELDS} yields are spent); while the lane answers
 * `yield`, `judgeFirst` has the earlier manual fire judged, and the lane is asked again.
 * Returns the lane's last answer, never `yield`.
 */
export async function admitInOrder(
  admit: (yielding: boolean) => Promise<LaneResult>,
  judgeFirst: (first: FirstFire) => Promise<void>,
): Promise<LaneResult> {
  for (let yields = 0; ; yields++) {
    const result = await admit(yields < MAX_YIELDS);
    if (result.decision !== 'yield' || result.first === undefined) return result;
    await judgeFirst(result.first);
  }
}

/**
 * The manual fires a worker is dispatching, each with a promise that resolves once its lane has
 * judged it (or its dispatch ended without a judgement): what a scheduled run that yields to one
 * waits for, instead of dispatching it a second time.
 */
export class PendingJudgements {
  readonly #pending = new Map<string, { readonly judged: Promise<void>; readonly resolve: () => void }>();

  /** Registers the dispatch of a manual fire (before anything of it is awaited). */
  dispatching(correlationId: string): void {
    if (this.#pending.has(correlationId)) return;
    let resolve: () => void = () => {};
    const judged = new Promise<void>((r) => {
      resolve = r;
    });
    this.#pending.set(correlationId, { judged, resolve });
  }

  /** The run's lane judged it, or its dispatch ended: whoever waits for it goes on. */
  judged(correlationId: string): void {
    this.#pending.get(correlationId)?.resolve();
    this.#pending.delete(correlationId);
  }

  /** Resolves once the manual fire being dispatched here is judged; undefined when none is. */
  of(correlationId: string): Promise<void> | undefined {
    return this.#pending.get(correlationId)?.judged;
  }
}
