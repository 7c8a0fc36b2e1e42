/**
 * How long before an occurrence a batch start begins (issue #4): long enough that the runs are
 * durably started when the instant comes and their engines are entered at it, not one start
 * transaction later. A start's duration grows with its batch, so the lead for `runs` runs is
 * the larger of the slowest of the last `window` starts and the highest recent per-run cost times
 * `runs` (an assumed 0.1 ms per run before any start was measured), times 1.5 plus 2 ms, within
 * [minMs, maxMs] (milliseconds): a start is as slow as the store's slowest moment, not its average.
 */
export class StartLead {
  readonly #recent: { ms: number; perRunMs: number }[] = [];

  constructor(
    private readonly window = 64,
    private readonly minMs = 1,
    private readonly maxMs = 250,
  ) {}

  /** Records one start transaction: its duration in milliseconds and how many runs it started. */
  observe(ms: number, runs: number): void {
    this.#recent.push({ ms, perRunMs: ms / Math.max(1, runs) });
    if (this.#recent.length > this.window) this.#recent.shift();
  }

  /** The lead for a start of `runs` runs, whole milliseconds in [minMs, maxMs]. */
  ms(runs: number): number {
    let slowest = 0;
    let perRun = this.#recent.length === 0 ? 0.1 : 0;
    for (const start of this.#recent) {
      slowest = Math.max(slowest, start.ms);
      perRun = Math.max(perRun, start.perRunMs);
    }
    const expected = Math.max(slowest, perRun * runs);
    return Math.min(this.maxMs, Math.max(this.minMs, Math.ceil(expected * 1.5) + 2));
  }
}
