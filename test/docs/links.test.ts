import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** The Markdown pages a reader follows: the README, SECURITY.md and docs/ (the spec copies aside). */
function pages(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), join(root, 'SECURITY.md'), ...docs, join(root, 'docs/spec/README.md')];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

/** The link targets of a page, outside code blocks and inline code. */
function links(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
}

// The README is short and points only inside the repository; docs/ links resolve (issue #21).
describe('the README and docs/', () => {
  it('the README has at most 300 lines and no link out of the repository', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).not.toMatch(/\]\((https?:|\/\/|mailto:)/);
    for (const target of links(join(root, 'README.md'))) expect(target, target).not.toMatch(/^\.\.\//);
  });

  it('every relative link of the README, SECURITY.md and docs/ names a file and heading that exist', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      for (const target of links(page)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : resolve(dirname(page), path);
        const where = `${page.slice(root.length + 1)} → ${target}`;
        if (!existsSync(file)) broken.push(where);
        else if (anchor !== undefined && file.endsWith('.md') && !anchors(file).has(anchor))
          broken.push(where);
      }
    }
    expect(broken).toEqual([]);
  });
});
