/**
 * How long before an occurrence a batch start begins (issue #4): the start transaction's recent
 * durations, so that the runs are durably started when the instant comes and their engines are
 * entered at it, not one transaction later. The lead is the slowest of the last `window` starts
 * (about a minute of due seconds by default) times 1.5 plus 2 ms, between `minMs` and `maxMs`
 * (milliseconds): a start is as slow as the store's slowest moment, not its average.
 */
export class StartLead {
  readonly #recent: number[] = [];

  constructor(
    private readonly window = 64,
    private readonly minMs = 1,
    private readonly maxMs = 100,
  ) {}

  /** Records one start transaction's duration, in milliseconds. */
  observe(ms: number): void {
    this.#recent.push(ms);
    if (this.#recent.length > this.window) this.#recent.shift();
  }

  /** The lead for the next start, whole milliseconds in [minMs, maxMs]. */
  ms(): number {
    const slowest = this.#recent.reduce((a, b) => Math.max(a, b), 0);
    return Math.min(this.maxMs, Math.max(this.minMs, Math.ceil(slowest * 1.5) + 2));
  }
}
