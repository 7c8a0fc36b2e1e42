import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors/index.js';

const root = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

// One catalogue of error codes, held in sync with its documentation and its use (style guide §5).
describe('error catalogue', () => {
  const doc = readFileSync(join(root, 'docs/errors.md'), 'utf8');
  const rows = new Map(
    [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [
      m[1],
      { status: Number(m[2]), doc: m[3] },
    ]),
  );

  it('documents every code with its status and doc line, and nothing else', () => {
    const expected = Object.entries(errorCatalogue).map(([code, e]) => [
      code,
      { status: e.status, doc: e.doc },
    ]);
    expect([...rows.entries()]).toEqual(expected);
  });

  it('uses every catalogued code somewhere in src/', () => {
    const source = sourceFiles(join(root, 'src'))
      .filter((f) => !f.endsWith('catalogue.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unused = Object.keys(errorCatalogue).filter((code) => !source.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });
});
