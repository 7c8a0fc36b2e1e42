import { ASSUMED_CLAIM_MS, claimWindowMs, MAX_CLAIM_WINDOW_MS } from '../decisions/claim-window.js';
import { SLOT_COUNT } from '../decisions/partition.js';
import type { Schedules } from '../store/schedules.js';

/** How often the window is sized again by a count of what is coming, ms. */
const REFRESH_MS = 1000;

/** The most occurrences a count reads: more would not widen the window further. */
const COUNT_CAP = 500_000;

/** Claims this large or larger measure the cost of a claim: a small one is mostly fixed costs. */
const MEASURED_CLAIM = 100;

/** How many recent large claims the cost of a claim is taken from (the slowest of them). */
const SAMPLES = 16;

/**
 * A worker's fire-ahead window as it goes (issue #24): sized by the pure `claimWindowMs` from a
 * count of the occurrences of its slots due within the longest window and the measured cost of
 * its recent large claims. Read from the store at most once per {@link REFRESH_MS}, and kept while
 * claims take full batches: a stream of claims goes on with the window it was planned with,
 * though what is left to claim shrinks.
 */
export class ClaimWindow {
  // The window (undefined: the configured one) and the instant (UTC ms) of the count it came from.
  #sized: { ms: number; countedAt: number } | undefined;
  // Wall time per occurrence of recent large claims, ms.
  readonly #costs: number[] = [];

  constructor(private readonly schedules: Pick<Schedules, 'dueCount'>) {}

  /** Records one claim: how long it took (ms, wall time) and how many occurrences it won. */
  observe(ms: number, claimed: number): void {
    if (claimed < MEASURED_CLAIM) return;
    this.#costs.push(ms / claimed);
    if (this.#costs.length > SAMPLES) this.#costs.shift();
  }

  /** The window of the next pass, ms: at least `baseMs` (the configured one); 0 when that is 0. */
  ms(baseMs: number): number {
    return baseMs <= 0 ? 0 : Math.max(baseMs, this.#sized?.ms ?? 0);
  }

  /**
   * Sizes the window at `now` (UTC ms) for a worker owning `slots` (undefined: all) whose last
   * pass found `lastDue` occurrences due (a full `batch`: it is mid-stream), and returns it (ms).
   */
  async size(
    now: number,
    slots: readonly number[] | undefined,
    baseMs: number,
    lastDue: number,
    batch: number,
  ): Promise<number> {
    const sized = this.#sized;
    if (baseMs <= 0) return 0;
    const fresh = sized !== undefined && now >= sized.countedAt && now - sized.countedAt < REFRESH_MS;
    if (sized !== undefined && (lastDue >= batch || fresh)) return this.ms(baseMs);
    const total = await this.schedules.dueCount(now + MAX_CLAIM_WINDOW_MS, COUNT_CAP);
    const share = slots === undefined ? 1 : slots.length / SLOT_COUNT;
    const ms = claimWindowMs({
      due: Math.ceil(total * share),
      perClaimMs: this.#costs.length === 0 ? ASSUMED_CLAIM_MS : Math.max(...this.#costs),
      baseMs,
      maxMs: MAX_CLAIM_WINDOW_MS,
    });
    this.#sized = { ms, countedAt: now };
    return ms;
  }
}
