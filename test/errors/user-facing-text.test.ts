import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
// TypeScript 5's JS API (the alias `npm run shape` uses): TypeScript 7 ships no createSourceFile.
import ts from 'typescript5';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors/index.js';
import { SETTING_KEYS } from '../../src/service/settings.js';
import { TOOLS } from '../../src/tools/toolset.js';
import { FIELDS } from '../../web/src/schema-info.js';

// User-facing text names no specification section or issue number (issue #21): a user cannot
// open "spec §10b". Comments and docs/ keep those citations; these strings speak for themselves.
const CITATION = /§|\bspec\b|decisions §|issue #/i;

describe('user-facing text', () => {
  it('the error catalogue documents every code without citing a spec section or issue', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) expect(entry.doc, code).not.toMatch(CITATION);
  });

  it('the agent tools (MCP) describe themselves and their fields without citations', () => {
    expect(TOOLS.length).toBeGreaterThan(0);
    for (const tool of TOOLS) {
      // The description, and the input and output schemas with their field descriptions.
      const { handler: _handler, ...shown } = tool;
      expect(JSON.stringify(shown), tool.name).not.toMatch(CITATION);
    }
  });

  it('the settings and the web editor’s field hints cite nothing', () => {
    for (const [key, setting] of Object.entries(SETTING_KEYS)) {
      expect(`${setting.doc} ${setting.allowed}`, key).not.toMatch(CITATION);
    }
    for (const field of FIELDS) expect(field.about, field.name).not.toMatch(CITATION);
  });
});

const ROOT = resolve(import.meta.dirname, '../..');

/** The TypeScript sources under `dir` (relative to the repository), recursively. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => join(dir, file));
}

/**
 * Every piece of text a source file can show someone: string literals, template text and JSX text
 * (comments, where citations belong, are not among them), with its line.
 */
function shownText(file: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(join(ROOT, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node) ||
      ts.isJsxText(node)
    ) {
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

// issue #23: the catalogue, the tools and the help texts are checked above and in
// test/cli/help-text.test.ts; this catches the rest (error messages thrown in place, inbox items,
// REST summaries, the MCP server's instructions, the editor's text) where they are written.
describe('the text in the sources', () => {
  it('of src/ and web/src/ (messages, inbox items, help, tool and route descriptions, the editor) cites no spec section or issue', () => {
    const files = [...sources('src'), ...sources('web/src')];
    expect(files.length).toBeGreaterThan(100);
    const citing = files.flatMap((file) =>
      shownText(file)
        .filter(({ text }) => CITATION.test(text))
        .map(({ line, text }) => `${relative(ROOT, join(ROOT, file))}:${line}: ${text.slice(0, 80)}`),
    );
    expect(citing).toEqual([]);
  });
});
