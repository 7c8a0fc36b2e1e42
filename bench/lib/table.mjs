/**
 * A plain-text table: the first `textColumns` columns left-aligned, the others right-aligned
 * (they are numbers). `rows` are arrays of strings, the same length as `headers`.
 */
export function formatTable(headers, rows, { textColumns = 1 } = {}) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((cell, i) => (i < textColumns ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

/** Whole numbers with thousands separators, e.g. 1,234,567. */
export function formatCount(value) {
  return Math.round(value).toLocaleString('en-US');
}
