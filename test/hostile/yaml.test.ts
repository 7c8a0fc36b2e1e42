import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { MAX_DOCUMENT_BYTES } from '../../src/yaml/limits.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { projectFolder } from '../support/project.js';
import { snapshot } from '../support/snapshot.js';

// Hostile YAML (decisions §6: "a scheduler document over 64 KiB, a YAML alias bomb, duplicate keys
// … are refused with the reason, and nothing changes"; limits in src/yaml/limits.ts) through every
// door a document comes in by: REST as YAML text and as {"yaml"} (spec §10, decisions §7), the
// agent tool scheduler_set (spec §9) and `ursa apply`. The parser's own cases are in
// test/yaml/parse.test.ts; here each refusal is checked end to end, with the store unchanged.

const URL = '/brain/acme/project/ops/scheduler';
const SOURCE = 'ops/_vance/scheduler/job.yaml';
const HEAD = 'description: hostile\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';
const VALID = `${HEAD}params:\n  topic: status\n`;

/** "Billion laughs" inside params: 9 levels of 9 aliases each, 9^9 strings once expanded. */
function billionLaughs(): string {
  let text = `${HEAD}params:\n  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
  const letters = 'abcdefghi';
  for (let i = 1; i < letters.length; i++) {
    text += `  ${letters[i]}: &${letters[i]} [${Array(9)
      .fill(`*${letters[i - 1]}`)
      .join(',')}]\n`;
  }
  return text;
}

/** `params` nested `levels` deep, the top-level mapping counted as 1. */
function nested(levels: number): string {
  return `${HEAD}params: ${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}\n`;
}

/** A valid scheduler document of exactly `bytes` bytes of UTF-8, padded by a comment of 2-byte characters. */
function documentOf(bytes: number, head = HEAD): string {
  const start = `${head}# `;
  const room = bytes - Buffer.byteLength(start) - 1;
  const text = `${start}${'é'.repeat(Math.floor(room / 2))}${'x'.repeat(room % 2)}\n`;
  expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
  return text;
}

/** A refusal as the problem document says it: code, detail and the field paths. */
interface Refusal {
  readonly code: string;
  /** The reason after `<source>: `. */
  readonly reason: string | RegExp;
  readonly path: string;
}

const ALIAS_BOMB: Refusal = {
  code: 'DOCUMENT_INVALID',
  reason: 'the aliases expand to too much data (more than the limit of 100); an alias bomb is refused',
  path: '',
};

const HOSTILE: readonly (readonly [string, () => string, Refusal])[] = [
  ['an alias bomb (billion laughs)', billionLaughs, ALIAS_BOMB],
  [
    'more than 100 aliases',
    () => `${HEAD}params:\n  a: &a x\n  list: [${Array(101).fill('*a').join(', ')}]\n`,
    {
      code: 'DOCUMENT_INVALID',
      reason: 'line 7, column 410: more than 100 aliases',
      path: 'params.list[100]',
    },
  ],
  [
    'a recursive alias',
    () => `${HEAD}params: &loop {self: *loop}\n`,
    {
      code: 'DOCUMENT_INVALID',
      reason: 'line 5, column 22: the alias *loop refers to a node that contains it',
      path: 'params.self',
    },
  ],
  [
    'nesting of 65 levels',
    () => nested(65),
    { code: 'DOCUMENT_INVALID', reason: 'line 5, column 72: nesting deeper than 64 levels', path: 'params' },
  ],
  [
    'nesting of 5,000 levels (deep enough to exhaust a recursive parser)',
    () => nested(5000),
    // The parser gives up where its stack runs out, so the column varies from call to call.
    { code: 'DOCUMENT_INVALID', reason: /line 5, column \d+: nesting deeper than 64 levels/, path: 'params' },
  ],
  [
    'nesting of 65 levels of block mappings',
    () => `${HEAD}params:\n${Array.from({ length: 64 }, (_, i) => `${'  '.repeat(i + 1)}k:`).join('\n')} x\n`,
    {
      code: 'DOCUMENT_INVALID',
      reason: 'line 69, column 129: nesting deeper than 64 levels',
      path: 'params',
    },
  ],
  [
    `a document of ${MAX_DOCUMENT_BYTES} + 1 bytes (fewer characters than that)`,
    () => documentOf(MAX_DOCUMENT_BYTES + 1),
    {
      code: 'DOCUMENT_INVALID',
      reason: 'the document is 65537 bytes; the limit is 65536 bytes (64 KiB)',
      path: '',
    },
  ],
  [
    'a duplicate top-level key',
    () => `${HEAD}cron: "* * * * * *"\n`,
    { code: 'DOCUMENT_INVALID', reason: 'line 5, column 1: duplicate key "cron"', path: 'cron' },
  ],
  [
    'a duplicate nested key',
    () => `${HEAD}params:\n  model: fast\n  model: slow\n`,
    { code: 'DOCUMENT_INVALID', reason: 'line 7, column 3: duplicate key "model"', path: 'params.model' },
  ],
  [
    'keys that differ in YAML but are one field (1 and "1")',
    () => `${HEAD}params:\n  1: a\n  "1": b\n`,
    { code: 'DOCUMENT_INVALID', reason: 'line 7, column 3: duplicate key "1"', path: 'params' },
  ],
];

/** `<source>: <reason>`, or a matcher for it when the reason is a pattern. */
function said(r: Refusal, source?: string): unknown {
  const prefix = source === undefined ? '' : `${source}: `;
  if (typeof r.reason === 'string') return `${prefix}${r.reason}`;
  return expect.stringMatching(new RegExp(`^${prefix.replace(/[.]/g, '\\.')}${r.reason.source}$`));
}

describe.each(DIALECTS)('hostile YAML on %s (decisions §6, spec §10)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
    const seeded = await put('job', VALID, 'text');
    expect(seeded.statusCode).toBe(201);
  });
  afterAll(async () => {
    await a.close();
  });

  function put(name: string, yaml: string, as: 'text' | 'json', token = a.tokens.write) {
    return a.app.inject({
      method: 'PUT',
      url: `${URL}/${name}`,
      headers: { ...a.auth(token), ...(as === 'text' ? { 'content-type': 'application/yaml' } : {}) },
      payload: as === 'text' ? yaml : { yaml },
    });
  }

  it.each(HOSTILE)(
    'refuses %s over REST, as YAML text and as {yaml}, changing nothing',
    async (_, make, r) => {
      const yaml = make();
      const before = await snapshot(a.t.store);
      for (const as of ['text', 'json'] as const) {
        // Over the scheduler that exists (a replacement) and a new name (a creation).
        for (const name of ['job', 'fresh']) {
          const res = await put(name, yaml, as);
          expect(res.statusCode, `${name} as ${as}: ${res.body.slice(0, 300)}`).toBe(400);
          expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
          const source = `ops/_vance/scheduler/${name}.yaml`;
          expect(res.json()).toEqual({
            type: `https://ursa.dev/errors#${r.code.toLowerCase()}`,
            title: r.code,
            status: 400,
            code: r.code,
            detail: said(r, source),
            errors: [{ path: r.path, message: said(r) }],
          });
        }
      }
      expect(await snapshot(a.t.store)).toEqual(before);
    },
  );

  it.each(HOSTILE)(
    'refuses %s through the agent tool scheduler_set, changing nothing',
    async (_, make, r) => {
      const before = await snapshot(a.t.store);
      const identity = { tenant: 'acme', project: 'ops', user: 'wes' };
      const result = await callTool(a.t.rt, identity, TOOLS, 'scheduler_set', { name: 'job', yaml: make() });
      expect(result).toEqual({
        ok: false,
        error: { code: r.code, message: said(r, SOURCE), issues: [{ path: r.path, message: said(r) }] },
      });
      expect(await snapshot(a.t.store)).toEqual(before);
    },
  );

  it('accepts a document of exactly 64 KiB (65,536 bytes) and stores it byte for byte', async () => {
    const yaml = documentOf(MAX_DOCUMENT_BYTES);
    const res = await put('exact', yaml, 'text');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
    const stored = await a.t.rt.repos.documents.get({
      tenant: 'acme',
      project: 'ops',
      path: '_vance/scheduler/exact.yaml',
    });
    expect(stored?.body).toBe(yaml);
  });

  it('refuses a 64 KiB document without timezone that the filled-in zone (spec §10c) would take over the limit', async () => {
    const yaml = documentOf(MAX_DOCUMENT_BYTES, 'description: hostile\ncron: "0 0 3 * * *"\nrecipe: noop\n');
    const before = await snapshot(a.t.store);
    const res = await put('nozone', yaml, 'json');
    expect(res.statusCode).toBe(400);
    const reason =
      'the document is 65536 bytes, and 65551 with timezone: UTC filled in; the limit is 65536 bytes (64 KiB): name the timezone and shorten the document';
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#document_invalid',
      title: 'DOCUMENT_INVALID',
      status: 400,
      code: 'DOCUMENT_INVALID',
      detail: `ops/_vance/scheduler/nozone.yaml: timezone: ${reason}`,
      errors: [{ path: 'timezone', message: reason }],
      allowed: 'at most 65536 bytes with the timezone',
    });
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses a request body over the 256 KiB body limit before reading it as YAML', async () => {
    const before = await snapshot(a.t.store);
    const res = await put('huge', `${HEAD}# ${'x'.repeat(300 * 1024)}\n`, 'text');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#validation_failed',
      title: 'VALIDATION_FAILED',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'the request body is too large',
      errors: [{ path: 'body', message: 'too large' }],
    });
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('ursa apply reports each hostile document as invalid, stores none of them, and still applies the rest', async () => {
    const dir = projectFolder({
      '_vance/recipes/bomb.yaml': billionLaughs().replace(HEAD, 'description: d\nengine: noop\n'),
      '_vance/scheduler/dup.yaml': `${HEAD}recipe: noop\n`,
      '_vance/scheduler/deep.yaml': nested(65),
      '_vance/scheduler/big.yaml': documentOf(MAX_DOCUMENT_BYTES + 1),
      '_vance/scheduler/fine.yaml': VALID,
    });
    const entries = await applyDirectory(a.t.rt, dir, 'acme', 'applied', libraryActor('ada'));
    expect(entries).toEqual([
      {
        path: '_vance/recipes/bomb.yaml',
        status: 'invalid',
        message: `_vance/recipes/bomb.yaml: ${ALIAS_BOMB.reason}`,
        issues: [{ path: '', message: ALIAS_BOMB.reason }],
      },
      {
        path: '_vance/scheduler/big.yaml',
        status: 'invalid',
        message:
          'applied/_vance/scheduler/big.yaml: the document is 65537 bytes; the limit is 65536 bytes (64 KiB)',
        issues: [{ path: '', message: 'the document is 65537 bytes; the limit is 65536 bytes (64 KiB)' }],
      },
      {
        path: '_vance/scheduler/deep.yaml',
        status: 'invalid',
        message: 'applied/_vance/scheduler/deep.yaml: line 5, column 72: nesting deeper than 64 levels',
        issues: [{ path: 'params', message: 'line 5, column 72: nesting deeper than 64 levels' }],
      },
      {
        path: '_vance/scheduler/dup.yaml',
        status: 'invalid',
        message: 'applied/_vance/scheduler/dup.yaml: line 5, column 1: duplicate key "recipe"',
        issues: [{ path: 'recipe', message: 'line 5, column 1: duplicate key "recipe"' }],
      },
      { path: '_vance/scheduler/fine.yaml', status: 'created' },
    ]);
    const stored = await a.t.rt.repos.documents.list('acme', 'applied', '');
    expect(stored.map((d) => d.path)).toEqual(['_vance/scheduler/fine.yaml']);
  });
});
