/**
 * "Did you mean" for a near-miss name (issue #23): a field written `timezon:` or a command typed
 * `lst`. Small and dependency-free; the CLI's own commands use commander's suggestions instead.
 */

/**
 * The optimal-string-alignment distance of `a` and `b`: insertions, deletions, substitutions and
 * swaps of two neighbouring characters each count 1 (`timezon` → `timezone` is 1, `crno` → `cron` 1).
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      let best = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[rows - 1] as number[])[cols - 1] as number;
}

/**
 * The candidate closest to `word` (case-insensitively), when it is close enough to be a slip:
 * at most 1 edit for a word of up to 4 characters, 2 for a longer one, and fewer edits than the
 * word has characters. Ties go to the earlier candidate. Null when none is that close.
 */
export function closestName(word: string, candidates: readonly string[]): string | null {
  const lower = word.toLowerCase();
  const limit = lower.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance && distance <= limit && distance < lower.length) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean "timezone"?)` for a near miss, else the empty string: to append to a message. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const closest = closestName(word, candidates);
  return closest === null ? '' : ` (did you mean "${closest}"?)`;
}
