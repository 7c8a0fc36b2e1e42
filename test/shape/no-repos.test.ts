import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript5';
import { describe, expect, it } from 'vitest';

// Issue #21, "layers that run one way": the interfaces reach the store only through the service
// layer (src/service), never through the Runtime's repositories (`rt.repos`). dependency-cruiser
// (`npm run shape`) sees imports only, and an interface that holds a Runtime needs no import of
// src/store to read `rt.repos.documents`; this test reads the code itself. It parses every .ts
// file of the interfaces with TypeScript 5.9's compiler API (the `typescript5` alias, as the shape
// check does: TypeScript 7 ships no JS API) and names each `.repos` read (`rt.repos`,
// `this.#rt.repos`, `rt?.repos`, `rt['repos']`) and each destructuring of `repos`
// (`const { repos } = rt`). It goes by the name alone: in the interfaces only a Runtime has one.

const ROOT = resolve(import.meta.dirname, '../..');
const INTERFACES = ['src/cli', 'src/http', 'src/tools', 'src/client', 'src/mcp'];
const NAME = 'repos';

/** Every .ts file under the interface folders, as a path from the repository root with `/` separators. */
function interfaceFiles(): string[] {
  return INTERFACES.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/')),
  ).sort();
}

/** Whether `node` is a name or string literal whose text is {@link NAME}. */
function isReposName(node: ts.Node | undefined): boolean {
  return (
    node !== undefined &&
    (ts.isIdentifier(node) || ts.isStringLiteralLike(node) || ts.isPrivateIdentifier(node)) &&
    node.text === NAME
  );
}

/** Whether `node` reads or destructures `repos`. */
function readsRepos(node: ts.Node): boolean {
  // rt.repos, this.#rt.repos, rt?.repos
  if (ts.isPropertyAccessExpression(node)) return isReposName(node.name);
  // rt['repos']
  if (ts.isElementAccessExpression(node)) return isReposName(node.argumentExpression);
  // const { repos } = rt; const { repos: r } = rt; ({ repos }) => …
  if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent))
    return isReposName(node.propertyName ?? node.name);
  // ({ repos } = rt); ({ repos: r } = rt)
  if (ts.isShorthandPropertyAssignment(node) || ts.isPropertyAssignment(node)) {
    const literal = node.parent;
    const assigned =
      ts.isBinaryExpression(literal.parent) &&
      literal.parent.left === literal &&
      literal.parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
    return assigned && isReposName(node.name);
  }
  return false;
}

/** `file:line: code` of each read of `repos` in `text` (the file `file`). */
function reposReads(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (readsRepos(node)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      found.push(`${file}:${line + 1}: ${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('interfaces reach the store only through the service layer, never rt.repos (issue #21)', () => {
  it('finds each way of reading repos off a Runtime', () => {
    const sample = [
      'await rt.repos.documents.get(key);',
      'await this.#rt.repos.feed.listForRef(t, p, "SCHEDULER", n, 1);',
      'options.rt?.repos.tokens;',
      "rt['repos'].users;",
      'const { repos } = rt;',
      'const { repos: r, clock } = this.#rt;',
      'const f = ({ repos }: Runtime) => repos;',
      '({ repos } = rt);',
      'const repos = listRepositories(); const reposCount = 2; call({ repos: 1 });',
    ].join('\n');
    expect(reposReads('sample.ts', sample)).toEqual([
      'sample.ts:1: rt.repos',
      'sample.ts:2: this.#rt.repos',
      'sample.ts:3: options.rt?.repos',
      "sample.ts:4: rt['repos']",
      'sample.ts:5: repos',
      'sample.ts:6: repos: r',
      'sample.ts:7: repos',
      'sample.ts:8: repos',
    ]);
  });

  it('holds for every .ts file under src/cli, src/http, src/tools, src/client and src/mcp', () => {
    const files = interfaceFiles();
    expect(files.length).toBeGreaterThan(20);
    const reads = files.flatMap((file) => reposReads(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(reads).toEqual([]);
  });
});
