import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  errorCatalogue,
  errorOfCode,
  InfrastructureError,
  isRefusal,
  UrsaError,
} from '../../src/errors/index.js';

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
    [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| ([a-z]+) \| (.+) \|$/gm)].map((m) => [
      m[1],
      { status: Number(m[2]), kind: m[3], doc: m[4] },
    ]),
  );

  it('documents every code with its status, kind and doc line, and nothing else', () => {
    const expected = Object.entries(errorCatalogue).map(([code, e]) => [
      code,
      { status: e.status, kind: e.kind, doc: e.doc },
    ]);
    expect([...rows.entries()]).toEqual(expected);
  });

  // issue #20: a kind for every code; the store's failures are infrastructure, never a refusal.
  it('gives every code a kind, and the store failing or served elsewhere is infrastructure', () => {
    const byKind = (kind: string) =>
      Object.entries(errorCatalogue)
        .filter(([, e]) => e.kind === kind)
        .map(([code]) => code);
    expect(byKind('infrastructure')).toEqual([
      'STORE_UNAVAILABLE',
      'STORE_BUSY',
      'STORE_FULL',
      'STORE_LOCKED',
      'STORE_COPY_MISMATCH',
      'INTERNAL',
    ]);
    expect(byKind('state')).toEqual([
      'NOT_FOUND',
      'STORE_NOT_EMPTY',
      'STORE_IN_USE',
      'STORE_SCHEMA_MISMATCH',
      'CONFLICT',
      'FORBIDDEN',
      'UNAUTHENTICATED',
      'LOCKED',
      'VERSION_MISMATCH',
      'ONE_SHOT_FIRED',
      'SCHEDULER_PAUSED',
      'SCHEDULER_INHERITED',
      'ATTEMPT_STALE',
      'NOT_A_QUESTION',
    ]);
    // Every code that asks the caller to come back later (503, 507) is infrastructure.
    for (const [code, e] of Object.entries(errorCatalogue))
      if (e.status === 503 || e.status === 507) expect(e.kind, code).toBe('infrastructure');
  });

  it('takes only input and state errors for refusals (isRefusal)', () => {
    for (const [code, e] of Object.entries(errorCatalogue)) {
      const error = errorOfCode(code as keyof typeof errorCatalogue, 'm');
      expect([code, error.kind, isRefusal(error)]).toEqual([code, e.kind, e.kind !== 'infrastructure']);
    }
    // Whatever is not Ursa's own word says nothing about the input either.
    expect(isRefusal(new Error('SQLITE_BUSY: database is locked'))).toBe(false);
    expect(isRefusal(new TypeError('x is undefined'))).toBe(false);
    expect(isRefusal(undefined)).toBe(false);
  });

  it('raises an infrastructure code only as an InfrastructureError, with its cause kept out of the message', () => {
    for (const [code, e] of Object.entries(errorCatalogue)) {
      const error = errorOfCode(code as keyof typeof errorCatalogue, 'm');
      expect([code, error instanceof InfrastructureError]).toEqual([code, e.kind === 'infrastructure']);
    }
    // Around the types (a code from the wire, a cast), UrsaError itself still refuses one.
    const wire = 'STORE_UNAVAILABLE' as 'NOT_FOUND';
    expect(() => new UrsaError(wire, 'm')).toThrow(TypeError);
    const driver = new Error('connect ECONNREFUSED 10.0.0.7:5432');
    const fault = new InfrastructureError('STORE_UNAVAILABLE', 'the store cannot be reached', {
      cause: driver,
    });
    expect([fault.cause, fault.kind, fault.status, JSON.stringify(fault)]).toEqual([
      driver,
      'infrastructure',
      503,
      JSON.stringify({ code: 'STORE_UNAVAILABLE', message: 'the store cannot be reached' }),
    ]);
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
