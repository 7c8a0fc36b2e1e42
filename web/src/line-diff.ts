/**
 * A line diff of two texts (issue #23: an earlier version against the current one), by the
 * longest common subsequence of their lines. Quadratic in lines, which a scheduler document
 * (at most 64 KiB) keeps small; no diff library is among the project's packages.
 */

/** One line of a diff: in both texts (`same`), only in the old one (`del`) or only in the new (`add`). */
export interface DiffLine {
  readonly op: 'same' | 'del' | 'add';
  readonly text: string;
}

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The lines of `before` turned into those of `after`: deletions before additions at each change. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the length of the longest common subsequence of a[i..] and b[j..], row by row.
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as Uint32Array;
    const next = lcs[i + 1] as Uint32Array;
    for (let j = m - 1; j >= 0; j--) {
      row[j] =
        a[i] === b[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i] as string });
      i++;
      j++;
    } else if (((lcs[i + 1] as Uint32Array)[j] as number) >= ((lcs[i] as Uint32Array)[j + 1] as number)) {
      out.push({ op: 'del', text: a[i++] as string });
    } else {
      out.push({ op: 'add', text: b[j++] as string });
    }
  }
  while (i < n) out.push({ op: 'del', text: a[i++] as string });
  while (j < m) out.push({ op: 'add', text: b[j++] as string });
  return out;
}
