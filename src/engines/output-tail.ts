/**
 * The last `limit` bytes of a byte stream, held in one fixed ring buffer: memory stays at `limit`
 * bytes however much a process writes (decisions §6: a run log keeps a tail, not the whole output).
 */
export class OutputTail {
  readonly #limit: number;
  #ring: Buffer | undefined;
  /** Next write position in the ring. */
  #end = 0;
  /** Bytes pushed in total (may exceed `limit`). */
  #total = 0;

  /** @param limit Bytes to keep, a non-negative integer; 0 keeps nothing. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Appends a chunk; bytes older than the last `limit` are overwritten. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    const limit = this.#limit;
    if (limit === 0 || chunk.length === 0) return;
    // Allocated on first output, so a silent process costs nothing.
    this.#ring ??= Buffer.alloc(limit);
    const data = chunk.length > limit ? chunk.subarray(chunk.length - limit) : chunk;
    const first = Math.min(data.length, limit - this.#end);
    this.#ring.set(data.subarray(0, first), this.#end);
    this.#ring.set(data.subarray(first), 0);
    this.#end = (this.#end + data.length) % limit;
  }

  /** True when bytes were dropped from the front. */
  get truncated(): boolean {
    return this.#total > this.#limit;
  }

  /** The kept bytes, oldest first (a copy). */
  bytes(): Buffer {
    const ring = this.#ring;
    if (ring === undefined) return Buffer.alloc(0);
    if (this.#total < this.#limit) return Buffer.from(ring.subarray(0, this.#end));
    return Buffer.concat([ring.subarray(this.#end), ring.subarray(0, this.#end)]);
  }

  /**
   * The kept bytes decoded as UTF-8. When the front was cut, the continuation bytes of a character
   * cut in half are dropped instead of showing as U+FFFD; an invalid sequence elsewhere does show so.
   */
  text(): string {
    const bytes = this.bytes();
    let start = 0;
    if (this.truncated) {
      // At most three continuation bytes (10xxxxxx) can belong to a character that began before the cut.
      while (start < 3 && start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    }
    return bytes.subarray(start).toString('utf8');
  }
}
