import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue #21: no file in src/ is over 400 lines, so a file keeps one job a reader can hold at once.

const ROOT = resolve(import.meta.dirname, '../..');
const LIMIT = 400;

/**
 * The files over the limit when the check came in, each with its length then: being split by
 * other parts of issue #21. An entry may not grow, and fails once its file is split (or gone):
 * delete it then, and delete this list when it is empty.
 */
const ALLOWANCE: Readonly<Record<string, number>> = {
};

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

  it('holds for every file not in the allowance', () => {
    const over = [...files].filter(([path, lines]) => lines > LIMIT && !(path in ALLOWANCE));
    expect(over.map(([path, lines]) => `${path}: ${lines} lines`)).toEqual([]);
  });

  it('lets no file in the allowance grow', () => {
    const grown = Object.entries(ALLOWANCE).filter(([path, allowed]) => (files.get(path) ?? 0) > allowed);
    expect(grown.map(([path, allowed]) => `${path}: ${files.get(path)} lines, allowed ${allowed}`)).toEqual(
      [],
    );
  });

  it('lists in the allowance only files still over the limit (delete the others from ALLOWANCE)', () => {
    const stale = Object.keys(ALLOWANCE).filter((path) => (files.get(path) ?? 0) <= LIMIT);
    expect(stale).toEqual([]);
  });

  it('counts lines as wc -l does', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('a\nb\n')]).toEqual(
      [0, 1, 1, 2, 2],
    );
  });
});
