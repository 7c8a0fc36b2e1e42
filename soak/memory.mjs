/**
 * The memory verdict on the steady worker (the one process that lives through the whole soak):
 * its samples (every few seconds, heap after a full GC) from the end of the warm-up on are split
 * into two halves of equal duration; memory "grows without bound" when the second half's median
 * exceeds the first half's by more than a tenth plus a margin — heap (live objects after GC) by
 * 10 % + 8 MiB, RSS by 20 % + 32 MiB. A leak proportional to the runs (or to time) shows as such
 * a step between the halves; garbage between collections, caches that fill once during the
 * warm-up and the SQLite page cache do not. Too few samples (a run under a minute or so): no verdict.
 */
export const MIB = 1024 * 1024;
export const HEAP_LIMIT = { ratio: 1.1, slack: 8 * MIB };
export const RSS_LIMIT = { ratio: 1.2, slack: 32 * MIB };

/** The warm-up: the first quarter of the soak, at least 20 s. */
export function warmupMs(durationMs) {
  return Math.max(20_000, durationMs / 4);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Least-squares slope of `key` over time, bytes per minute. */
function slope(samples, key) {
  const n = samples.length;
  const mt = samples.reduce((s, x) => s + x.t, 0) / n;
  const mv = samples.reduce((s, x) => s + x[key], 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.t - mt) * (x[key] - mv);
    den += (x.t - mt) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60_000;
}

/**
 * `samples`: [{ t (ms since the workers started), rss, heapUsed }], ascending; `durationMs`: the
 * soak's length. Returns the figures and `growing` (true / false / null when too short to say).
 */
export function judgeMemory(samples, durationMs) {
  const first = samples[0];
  const last = samples[samples.length - 1];
  const from = warmupMs(durationMs);
  const post = samples.filter((s) => s.t >= from && s.t <= durationMs);
  const base = { start: first, end: last, warmupMs: from, samples: samples.length };
  if (post.length < 6)
    return { ...base, growing: null, why: 'too short to judge (fewer than 6 samples after the warm-up)' };
  const middle = (post[0].t + post[post.length - 1].t) / 2;
  const a = post.filter((s) => s.t < middle);
  const b = post.filter((s) => s.t >= middle);
  const halves = {
    heap: [median(a.map((s) => s.heapUsed)), median(b.map((s) => s.heapUsed))],
    rss: [median(a.map((s) => s.rss)), median(b.map((s) => s.rss))],
  };
  const heapGrows = halves.heap[1] > halves.heap[0] * HEAP_LIMIT.ratio + HEAP_LIMIT.slack;
  const rssGrows = halves.rss[1] > halves.rss[0] * RSS_LIMIT.ratio + RSS_LIMIT.slack;
  const why = [heapGrows ? 'heap' : '', rssGrows ? 'RSS' : ''].filter(Boolean).join(' and ');
  return {
    ...base,
    halves,
    slopes: { heap: slope(post, 'heapUsed'), rss: slope(post, 'rss') },
    growing: heapGrows || rssGrows,
    why:
      why === ''
        ? 'second half within the limits of the first'
        : `${why} grew past the limit between the halves`,
  };
}
