import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue #21: no file in src/ is over 400 lines, so a file keeps one job a reader can hold at once.

const ROOT = resolve(import.meta.dirname, '../..');
const LIMIT = 400;

/** Lines of `text` as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text: string): number {
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') || text === '' ? newlines : newlines + 1;
}

/** Every file under src/, as a path from the repository root with `/` separators, and its lines. */
function sourceFiles(): Map<string, number> {
  const files = new Map<string, number>();
  const src = join(ROOT, 'src');
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(ROOT, path).split('\\').join('/'), lineCount(readFileSync(path, 'utf8')));
  }
  return files;
}

describe(`file size: no file in src/ over ${LIMIT} lines`, () => {
  const files = sourceFiles();

  it('holds for every file', () => {
    const over = [...files].filter(([, lines]) => lines > LIMIT);
    expect(over.map(([path, lines]) => `${path}: ${lines} lines`)).toEqual([]);
  });
});
