import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { parseSchedulerDocument } from '../../src/scheduler/document.js';
import { MAX_DOCUMENT_BYTES } from '../../src/yaml/limits.js';
import { parseYamlDocument } from '../../src/yaml/parse.js';
import { thrown } from '../support/cron.js';

const SOURCE = '_vance/scheduler/nightly.yaml';

function refusal(text: string): UrsaError {
  return thrown(() => parseYamlDocument(text, SOURCE)) as UrsaError;
}

/** The classic "billion laughs": 9 levels of 9 aliases each, 9^9 strings once expanded. */
function billionLaughs(): string {
  const letters = 'abcdefghi';
  let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let i = 1; i < letters.length; i++) {
    const [previous, current] = [letters[i - 1], letters[i]];
    text += `${current}: &${current} [${Array(9).fill(`*${previous}`).join(',')}]\n`;
  }
  return text;
}

function nested(levels: number): string {
  return `params: ${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}\n`;
}

// decisions §6: bad input is refused with the reason, never half-read.
describe('safe YAML loading (decisions §6)', () => {
  it('returns plain values under the YAML 1.2 core schema: timestamps and yes stay strings', () => {
    expect(
      parseYamlDocument(
        'at: 2026-05-14T08:00:00\nenabled: yes\ncount: 3\nratio: 0.5\nnone: ~\nlist: [a, b]\n',
        SOURCE,
      ),
    ).toEqual({
      at: '2026-05-14T08:00:00',
      enabled: 'yes',
      count: 3,
      ratio: 0.5,
      none: null,
      list: ['a', 'b'],
    });
  });

  it('returns null for an empty document or one with only comments', () => {
    expect(parseYamlDocument('', SOURCE)).toBeNull();
    expect(parseYamlDocument('# later\n', SOURCE)).toBeNull();
  });

  it('accepts anchors and aliases within the limits', () => {
    expect(parseYamlDocument('base: &b {model: fast}\nother: *b\n', SOURCE)).toEqual({
      base: { model: 'fast' },
      other: { model: 'fast' },
    });
  });

  describe('size: 64 KiB of UTF-8', () => {
    /** A valid scheduler document of exactly `bytes` bytes, padded with a comment of 2-byte characters. */
    function documentOf(bytes: number): string {
      const head = 'description: big\ncron: "@daily"\nrecipe: noop\n# ';
      const room = bytes - Buffer.byteLength(head) - 1;
      const text = `${head}${'é'.repeat(Math.floor(room / 2))}${'x'.repeat(room % 2)}\n`;
      expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
      return text;
    }

    it('accepts a valid document of exactly 65,536 bytes', () => {
      const definition = parseSchedulerDocument(documentOf(MAX_DOCUMENT_BYTES), {
        name: 'big',
        path: SOURCE,
      });
      expect(definition.description).toBe('big');
    });

    it('refuses 65,537 bytes, counting bytes rather than characters', () => {
      const text = documentOf(MAX_DOCUMENT_BYTES + 1);
      expect(text.length).toBeLessThan(MAX_DOCUMENT_BYTES);
      const error = refusal(text);
      expect(error.code).toBe('DOCUMENT_INVALID');
      expect(error.message).toBe(`${SOURCE}: the document is 65537 bytes; the limit is 65536 bytes (64 KiB)`);
      expect(error.value).toBe(65_537);
      expect(error.issues).toEqual([
        { path: '', message: 'the document is 65537 bytes; the limit is 65536 bytes (64 KiB)' },
      ]);
    });
  });

  describe('duplicate keys', () => {
    it('refuses a duplicate top-level key with its line and column', () => {
      const error = refusal('description: a\ncron: "@daily"\ncron: "@hourly"\n');
      expect(error.code).toBe('DOCUMENT_INVALID');
      expect(error.message).toBe(`${SOURCE}: line 3, column 1: duplicate key "cron"`);
      expect(error.field).toBe('cron');
      expect(error.value).toBe('cron');
    });

    it('refuses a duplicate nested key with its field path', () => {
      const error = refusal('params:\n  model: fast\n  model: slow\n');
      expect(error.message).toBe(`${SOURCE}: line 3, column 3: duplicate key "model"`);
      expect(error.field).toBe('params.model');
      expect(error.issues).toEqual([
        { path: 'params.model', message: 'line 3, column 3: duplicate key "model"' },
      ]);
    });
  });

  it('refuses keys that differ in YAML but name the same field (1 and "1")', () => {
    const error = refusal('params:\n  1: a\n  "1": b\n');
    expect(error.message).toBe(`${SOURCE}: line 3, column 3: duplicate key "1"`);
    expect(error.field).toBe('params');
  });

  describe('aliases', () => {
    it('refuses the billion-laughs alias bomb before expanding it', () => {
      const error = refusal(billionLaughs());
      expect(error.code).toBe('DOCUMENT_INVALID');
      expect(error.message).toBe(
        `${SOURCE}: the aliases expand to too much data (more than the limit of 100); an alias bomb is refused`,
      );
    });

    it('refuses more than 100 aliases', () => {
      const text = `a: &a x\nlist: [${Array(101).fill('*a').join(', ')}]\n`;
      expect(refusal(text).message).toBe(`${SOURCE}: line 2, column 408: more than 100 aliases`);
    });

    it('refuses an alias to an anchor that contains it', () => {
      const error = refusal('params: &loop [1, *loop]\n');
      expect(error.message).toBe(
        `${SOURCE}: line 1, column 19: the alias *loop refers to a node that contains it`,
      );
      expect(error.field).toBe('params[1]');
    });

    it('refuses an alias without an anchor', () => {
      expect(refusal('a: *missing\n').message).toBe(
        `${SOURCE}: line 1, column 4: the alias *missing has no anchor &missing before it`,
      );
    });

    it('counts an alias with the depth of what it expands', () => {
      const deep = `${'['.repeat(40)}${']'.repeat(40)}`;
      const error = refusal(`a: &deep ${deep}\nb: ${'['.repeat(30)}*deep${']'.repeat(30)}\n`);
      expect(error.message).toBe(
        `${SOURCE}: line 2, column 34: nesting deeper than 64 levels once the alias *deep is expanded`,
      );
      expect(error.field).toBe('b');
    });
  });

  describe('nesting', () => {
    it('accepts 64 levels, the top-level mapping counted', () => {
      expect(() => parseYamlDocument(nested(64), SOURCE)).not.toThrow();
    });

    it('refuses 65 levels, naming the top-level field', () => {
      const error = refusal(nested(65));
      expect(error.code).toBe('DOCUMENT_INVALID');
      expect(error.message).toBe(`${SOURCE}: line 1, column 72: nesting deeper than 64 levels`);
      expect(error.field).toBe('params');
    });

    it('refuses nesting deep enough to exhaust the parser with the same reason', () => {
      const error = refusal(nested(5000));
      expect(error.code).toBe('DOCUMENT_INVALID');
      expect(error.message).toMatch(
        /^_vance\/scheduler\/nightly\.yaml: line 1, column \d+: nesting deeper than 64 levels$/,
      );
      expect(error.field).toBe('params');
    });
  });

  it('refuses more than one document in a file', () => {
    const error = refusal('description: a\n---\ndescription: b\n');
    expect(error.message).toBe(
      `${SOURCE}: line 2, column 1: the file holds 2 YAML documents; only one is allowed (remove the --- separator)`,
    );
  });

  it('accepts a single document that starts with ---', () => {
    expect(parseYamlDocument('---\ndescription: a\n', SOURCE)).toEqual({ description: 'a' });
  });

  describe('syntax errors', () => {
    it('names the line, the column and the reason, without a stack', () => {
      const error = refusal('description: "unterminated\ncron: x\n');
      expect(error.code).toBe('DOCUMENT_INVALID');
      expect(error.message).toBe(`${SOURCE}: line 3, column 1: missing closing "quote`);
      expect(error.message).not.toMatch(/\n\s+at /);
    });

    it('explains that an unquoted cron starting with * reads as an alias', () => {
      const error = refusal('cron: */5 * * * * *\n');
      expect(error.message).toBe(
        `${SOURCE}: line 1, column 11: unexpected alias at node end (quote a value that starts with * or &, e.g. "*/5 * * * * *")`,
      );
      expect(error.field).toBe('cron');
    });

    it('refuses a tab used as indentation', () => {
      expect(refusal('params:\n\tmodel: fast\n').message).toBe(
        `${SOURCE}: line 2, column 1: tabs are not allowed as indentation`,
      );
    });
  });

  describe('what a document may build', () => {
    it.each([
      ['a: !!binary aGVsbG8=\n', 'line 1, column 13: the tag !!binary is not allowed', 'a'],
      ['a: !!set {x}\n', 'line 1, column 10: the tag !!set is not allowed', 'a'],
      ['a: !shell "rm -rf /"\n', 'line 1, column 11: the tag !shell is not allowed', 'a'],
    ])('refuses a tag outside the core schema: %j', (text, message, field) => {
      const error = refusal(text);
      expect(error.message).toBe(`${SOURCE}: ${message}`);
      expect(error.field).toBe(field);
    });

    it('accepts the core schema tags', () => {
      expect(parseYamlDocument('a: !!str 5\nb: !!int "7"\n', SOURCE)).toEqual({ a: '5', b: 7 });
    });

    it('refuses a mapping key that is not a plain value', () => {
      expect(refusal('params:\n  ? [a, b]\n  : 1\n').message).toBe(
        `${SOURCE}: line 2, column 5: a mapping key must be a plain value`,
      );
    });

    it('refuses the key __proto__', () => {
      const error = refusal('params:\n  __proto__: {admin: true}\n');
      expect(error.message).toBe(`${SOURCE}: line 2, column 3: the key "__proto__" is not allowed`);
      expect(error.field).toBe('params');
    });

    it('refuses a parser warning such as an unknown directive', () => {
      expect(refusal('%FOO bar\n---\na: 1\n').message).toBe(
        `${SOURCE}: line 1, column 1: unknown directive %FOO`,
      );
    });
  });
});
