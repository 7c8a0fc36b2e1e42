import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const specDir = join(root, 'docs/spec');

/** The source and Markdown files under `dir`, recursively, outside node_modules. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'node_modules'
        ? []
        : files(join(dir, entry.name))
      : /\.(ts|tsx|mjs|md)$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Section ids of scheduler.md: its numbered headings ("9a. Scheduler Log Documents", "4.2 Workflow Trigger"). */
function specSections(text: string): Set<string> {
  return new Set([...text.matchAll(/^(\d+(?:\.\d+)?[a-z]?)\.? \S/gm)].map((m) => m[1] ?? ''));
}

/** Section ids of decisions.md: its "## N. Title" headings. */
function decisionSections(text: string): Set<string> {
  return new Set([...text.matchAll(/^## (\d+[a-z]?)\. /gm)].map((m) => m[1] ?? ''));
}

// docs/spec/ copies the specification the way test/cases/ copies the cron vectors (issue #21).
describe('the copy of the specification in docs/spec', () => {
  const source = readFileSync(join(specDir, 'SOURCE.md'), 'utf8');

  for (const name of ['scheduler.md', 'decisions.md']) {
    it(`${name} is unmodified: its digest is the one docs/spec/SOURCE.md records`, () => {
      const digest = createHash('sha256')
        .update(readFileSync(join(specDir, name)))
        .digest('hex');
      expect(source).toContain(`${name} sha256: ${digest}`);
    });
  }

  it('has every section that a comment, test or page cites as "spec §N" or "decisions §N"', () => {
    const spec = specSections(readFileSync(join(specDir, 'scheduler.md'), 'utf8'));
    const decisions = decisionSections(readFileSync(join(specDir, 'decisions.md'), 'utf8'));
    expect(spec.size).toBeGreaterThan(15);
    expect([...decisions]).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    const unresolved: string[] = [];
    let cited = 0;
    const scanned = ['src', 'test', 'web/src', 'docs', 'bench', 'soak'].flatMap((dir) =>
      files(join(root, dir)).filter((file) => !file.startsWith(specDir)),
    );
    for (const file of [...scanned, join(root, 'README.md')]) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\b(spec|decisions) §(\d+(?:\.\d+)?[a-z]?)/g)) {
        cited += 1;
        const known = m[1] === 'spec' ? spec : decisions;
        if (!known.has(m[2] ?? '')) unresolved.push(`${file.slice(root.length + 1)}: ${m[0]}`);
      }
    }
    expect(cited).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
  });
});
