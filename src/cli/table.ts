/**
 * Rows of cells as lines with aligned columns, two spaces apart; `right` columns are right-aligned.
 * The last column is not padded (no trailing blanks).
 */
export function table(
  rows: readonly (readonly string[])[],
  right: ReadonlySet<number> = new Set(),
): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) =>
        i === row.length - 1
          ? cell
          : right.has(i)
            ? cell.padStart(widths[i] ?? 0)
            : cell.padEnd(widths[i] ?? 0),
      )
      .join('  '),
  );
}
