import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { UrsaError, type ValidationIssue } from '../../src/errors/index.js';
import {
  parseSchedulerDocument,
  type SchedulerDefinition,
  schedulerPath,
  validateSchedulerDocument,
} from '../../src/scheduler/index.js';
import { SCHEDULER_FIELDS } from '../../src/scheduler/schema.js';
import type { Caller } from '../../src/service/caller.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { snapshot } from '../support/snapshot.js';

// Property tests of scheduler documents (issue #12): spec §2's schema, decisions §3 (cron, at,
// zones), §4 (misfire, catchUpWindow) and §6 (bad input is refused with the reason and nothing
// changes). Documents are generated as values, written as YAML (or JSON, which is YAML too), then
// mutated or replaced by random text.

const PATH = 'ops/_vance/scheduler/job.yaml';
const OPTIONS = { name: 'job', path: PATH };

// ---------------------------------------------------------------------------------------------
// Valid documents, as plain values.

const CRONS = [
  '0 0 8 * * MON-FRI',
  '*/10 * * * * *',
  '0 30 2 * * *',
  '@daily',
  '0 0 0 L * ?',
  '0 0 9 ? * 2#1',
];
const ATS = [
  '2027-05-14T08:00:00',
  '2026-03-29T02:30:00',
  '2027-05-14T08:00:00+02:00',
  '2027-05-14T06:00:00Z',
];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'europe/london'];
const WINDOWS = ['PT1H', 'PT30S', 'P1D', 'P2W', 'PT1H30M'];

const nameText = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/);
const nonBlank = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '');
/** Parameter values: JSON values (what YAML and JSON both carry), no `__proto__` key (decisions §6 refuses it). */
// As a document carries it: JSON has no -0 (fast-check's jsonValue makes one now and then, which
// the JSON form of a document reads back as 0).
const paramValue = fc
  .jsonValue({ maxDepth: 3 })
  .filter((v) => !JSON.stringify(v).includes('"__proto__"'))
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown);

interface ValidDoc {
  readonly value: Record<string, unknown>;
  readonly expected: Partial<Record<keyof SchedulerDefinition, unknown>>;
}

const validDoc: fc.Arbitrary<ValidDoc> = fc
  .record(
    {
      description: nonBlank,
      trigger: fc.oneof(
        fc.constantFrom(...CRONS).map((cron) => ({ cron })),
        fc.constantFrom(...ATS).map((at) => ({ at })),
      ),
      timezone: fc.constantFrom(...ZONES, null, ''),
      enabled: fc.boolean(),
      target: fc.oneof(
        fc.constant({ recipe: 'noop' }),
        nameText.map((recipe) => ({ recipe })),
        nameText.map((workflow) => ({ workflow })),
      ),
      params: fc.dictionary(
        fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__'),
        paramValue,
        {
          maxKeys: 3,
        },
      ),
      initialMessage: fc.string({ maxLength: 40 }),
      runAs: nameText,
      overlap: fc.constantFrom('skip', 'queue', 'cancelPrevious'),
      lockMode: fc.constantFrom('full', 'protected', 'hidden'),
      tags: fc.array(nonBlank, { maxLength: 3 }),
      misfire: fc.constantFrom('once', 'skip'),
      catchUpWindow: fc.constantFrom(...WINDOWS),
    },
    // Everything but the required fields may be left out.
    { requiredKeys: ['description', 'trigger', 'target'] },
  )
  .map((r) => {
    const { trigger, target, ...rest } = r;
    const value: Record<string, unknown> = { description: rest.description, ...trigger, ...target };
    for (const [k, v] of Object.entries(rest)) if (k !== 'description') value[k] = v;
    const tz = typeof r.timezone === 'string' && r.timezone.trim() !== '' ? r.timezone : undefined;
    const expected = {
      description: r.description,
      timezone: tz,
      enabled: r.enabled ?? true,
      target:
        'recipe' in target
          ? { kind: 'recipe', recipe: target.recipe }
          : { kind: 'workflow', workflow: target.workflow },
      params: r.params ?? {},
      initialMessage: r.initialMessage,
      runAs: r.runAs,
      overlap: r.overlap ?? 'skip',
      lockMode: r.lockMode ?? 'full',
      tags: r.tags ?? [],
      misfire: r.misfire ?? 'once',
      catchUpWindow: r.catchUpWindow,
    };
    return { value, expected };
  });

/** A document as YAML text (block or flow style) or as JSON. */
const written = (value: unknown): fc.Arbitrary<string> =>
  fc.constantFrom(
    stringify(value),
    stringify(value, { defaultStringType: 'QUOTE_DOUBLE' }),
    JSON.stringify(value),
    JSON.stringify(value, null, 2),
  );

// ---------------------------------------------------------------------------------------------
// Mutations that break one field, and what the refusal must name.

/** Values each field refuses (spec §2, decisions §3, §4, §6). */
const BAD: Record<string, fc.Arbitrary<unknown>> = {
  description: fc.constantFrom('', '   ', 42, ['a'], { a: 1 }, null, true),
  cron: fc.constantFrom('* * * * *', '0 0 0 31 2 *', '0 0 9 * * MON#6', 'every day', '60 * * * * *', 5, [
    'x',
  ]),
  at: fc.constantFrom('tomorrow', '2026-13-01T00:00:00', '2026-05-14', '08:00', 1_700_000_000, ['x']),
  timezone: fc.constantFrom('Mars/Olympus', '+02:00', 'Europe/Berlin ', 42, ['UTC'], { id: 'UTC' }),
  enabled: fc.constantFrom('yes', 'true', 1, 0, 'off', ['x']),
  recipe: fc.constantFrom('a/b', '../x', '', ' noop', 'x'.repeat(129), 5, { name: 'noop' }),
  workflow: fc.constantFrom('a/b', '..', '', 7),
  params: fc.constantFrom('a=b', 3, ['a', 'b'], true),
  initialMessage: fc.constantFrom(3, ['hello'], { text: 'hi' }, false),
  runAs: fc.constantFrom('', '   ', 7, ['ada']),
  overlap: fc.constantFrom('sometimes', 'Skip', 1, ''),
  lockMode: fc.constantFrom('open', 'FULL', 0),
  tags: fc.constantFrom('daily', [''], ['ok', 1], { a: 'b' }, 3),
  misfire: fc.constantFrom('always', 'ONCE', 2),
  catchUpWindow: fc.constantFrom('P1M', 'P1Y', 'PT0S', '-PT1H', 'soon', '1h', 60, 'P99999999999999999999D'),
};

type Mutation =
  | { readonly kind: 'field'; readonly field: string; readonly bad: unknown }
  | { readonly kind: 'unknown'; readonly key: string }
  | { readonly kind: 'remove'; readonly field: 'description' }
  | { readonly kind: 'both' | 'neither'; readonly pair: readonly [string, string] };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc
    .constantFrom(...Object.keys(BAD))
    .chain((field) =>
      (BAD[field] as fc.Arbitrary<unknown>).map((bad): Mutation => ({ kind: 'field', field, bad })),
    ),
  fc
    .stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,12}$/)
    .filter((key) => !SCHEDULER_FIELDS.includes(key))
    .map((key): Mutation => ({ kind: 'unknown', key })),
  fc.constant<Mutation>({ kind: 'remove', field: 'description' }),
  fc.constantFrom<Mutation>(
    { kind: 'both', pair: ['cron', 'at'] },
    { kind: 'neither', pair: ['cron', 'at'] },
    { kind: 'both', pair: ['recipe', 'workflow'] },
    { kind: 'neither', pair: ['recipe', 'workflow'] },
  ),
);

function mutate(value: Record<string, unknown>, m: Mutation): Record<string, unknown> {
  const out = { ...value };
  switch (m.kind) {
    case 'field': {
      // Setting one of an exclusive pair replaces its partner, so only the field itself is wrong.
      const partner = { cron: 'at', at: 'cron', recipe: 'workflow', workflow: 'recipe' }[m.field];
      if (partner !== undefined) delete out[partner];
      out[m.field] = m.bad;
      return out;
    }
    case 'unknown':
      out[m.key] = 'x';
      return out;
    case 'remove':
      delete out[m.field];
      return out;
    case 'both':
      out[m.pair[0]] = m.pair[0] === 'cron' ? '@daily' : m.pair[0] === 'recipe' ? 'noop' : 'w';
      out[m.pair[1]] = m.pair[1] === 'at' ? '2027-01-01T00:00:00Z' : 'w';
      return out;
    case 'neither':
      delete out[m.pair[0]];
      delete out[m.pair[1]];
      return out;
  }
}

/** The field path a refusal of `m` must name ('' for a rule about the whole document). */
function pathOf(m: Mutation): string {
  switch (m.kind) {
    case 'field':
      return m.field;
    case 'unknown':
      return m.key;
    case 'remove':
      return m.field;
    default:
      return '';
  }
}

const namesField = (issue: ValidationIssue, path: string) =>
  path === ''
    ? issue.path === ''
    : issue.path === path || issue.path.startsWith(`${path}.`) || issue.path.startsWith(`${path}[`);

// ---------------------------------------------------------------------------------------------
// Random input: text, YAML of random values, and valid documents with characters edited.

const YAML_CHARS = [...'abcdefghijklmnopqrstuvwxyz:-[]{}#&*!|>\'"%@`,?  \n\n\t\\0123456789.~'];
const randomText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom(...YAML_CHARS), maxLength: 200 }),
  fc.anything({ maxDepth: 3 }).map((v) => {
    try {
      return stringify(v) ?? String(v);
    } catch {
      return String(v);
    }
  }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

const editedText = fc
  .tuple(validDoc, fc.nat(), fc.constantFrom(...YAML_CHARS), fc.constantFrom('delete', 'insert', 'replace'))
  .chain(([doc, n, c, edit]) =>
    written(doc.value).map((t) => {
      const i = t.length === 0 ? 0 : n % t.length;
      if (edit === 'delete') return t.slice(0, i) + t.slice(i + 1);
      if (edit === 'insert') return t.slice(0, i) + c + t.slice(i);
      return t.slice(0, i) + c + t.slice(i + 1);
    }),
  );

/** A refusal's issues: each a field path ('' = the whole document) and a reason. */
function expectIssues(issues: readonly ValidationIssue[], text: string): void {
  expect(issues.length).toBeGreaterThan(0);
  for (const issue of issues) {
    expect(typeof issue.path).toBe('string');
    expect(typeof issue.message).toBe('string');
    expect(issue.message.trim()).not.toBe('');
    // A named field is one of the schema's, or a key the text holds (an unknown or duplicate one).
    const top = /^[^.[]*/.exec(issue.path)?.[0] ?? '';
    if (top !== '' && !SCHEDULER_FIELDS.includes(top)) expect(text).toContain(top);
  }
}

describe('validating scheduler documents (spec §2, decisions §3, §4, §6)', () => {
  it('spec §2: a generated valid document, as YAML or JSON, validates to exactly its values with the defaults', () => {
    fc.assert(
      fc.property(
        validDoc.chain((doc) => written(doc.value).map((text) => ({ doc, text }))),
        ({ doc, text }) => {
          const result = validateSchedulerDocument(text, OPTIONS);
          if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}\n${text}`);
          const d = result.definition;
          expect(d.name).toBe('job');
          expect(d).toMatchObject(doc.expected);
          const value = doc.value;
          if (typeof value.cron === 'string') {
            expect(d.trigger).toMatchObject({ kind: 'cron', expression: value.cron });
          } else {
            expect(d.trigger).toMatchObject({ kind: 'at', at: value.at });
          }
          expect(d.zone.id.toLowerCase()).toBe(
            ((doc.expected.timezone as string | undefined) ?? 'UTC').toLowerCase(),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('spec §2: a document with one field broken is refused, and an issue names that field path', () => {
    fc.assert(
      fc.property(validDoc, mutation, fc.boolean(), (doc, m, asJson) => {
        const value = mutate(doc.value, m);
        const text = asJson ? JSON.stringify(value) : stringify(value);
        const result = validateSchedulerDocument(text, OPTIONS);
        if (result.ok) throw new Error(`accepted after ${JSON.stringify(m)}:\n${text}`);
        expectIssues(result.issues, text);
        const path = pathOf(m);
        expect(
          result.issues.some((issue) => namesField(issue, path)),
          `no issue names ${JSON.stringify(path)}: ${JSON.stringify(result.issues)}`,
        ).toBe(true);
        // parseSchedulerDocument refuses the same way, with the same issues, as a typed error.
        let error: unknown;
        try {
          parseSchedulerDocument(text, OPTIONS);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(UrsaError);
        expect((error as UrsaError).code).toBe('SCHEDULER_INVALID');
        expect((error as UrsaError).issues).toEqual(result.issues);
        for (const line of (error as UrsaError).message.split('\n'))
          expect(line.startsWith(`${PATH}: `)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('spec §2: any value in any field never crashes validation; a refusal names that field (or the whole document)', () => {
    const durationLike = fc
      .tuple(
        fc.constantFrom('P', 'PT', '-P', 'p', 'P1DT', ''),
        fc.oneof(fc.nat(), fc.constantFrom(2 ** 53, 1e21, 0.5)),
        fc.constantFrom('W', 'D', 'H', 'M', 'S', 'Y', '.5S', ',5H', ''),
      )
      .map(([p, n, u]) => `${p}${n}${u}`);
    const anyValue = fc.oneof(
      fc.string({ maxLength: 30 }),
      durationLike,
      fc.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?$/),
      fc.anything({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(validDoc, fc.constantFrom(...SCHEDULER_FIELDS), anyValue, (doc, field, bad) => {
        const value = mutate(doc.value, { kind: 'field', field, bad });
        let text: string;
        try {
          text = stringify(value);
        } catch {
          return; // a value YAML cannot write (e.g. a symbol key) is no document
        }
        const result = validateSchedulerDocument(text, OPTIONS);
        if (result.ok) return;
        expectIssues(result.issues, text);
        expect(result.issues.some((issue) => namesField(issue, field) || issue.path === '')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('decisions §6: random text never crashes validation: a definition, or issues with field paths', () => {
    fc.assert(
      fc.property(fc.oneof(randomText, editedText), (text) => {
        const result = validateSchedulerDocument(text, OPTIONS);
        let error: unknown;
        try {
          parseSchedulerDocument(text, OPTIONS);
        } catch (e) {
          error = e;
        }
        if (result.ok) {
          expect(error).toBeUndefined();
          return;
        }
        expectIssues(result.issues, text);
        expect(error).toBeInstanceOf(UrsaError);
        expect(['DOCUMENT_INVALID', 'SCHEDULER_INVALID']).toContain((error as UrsaError).code);
        expect((error as UrsaError).issues).toEqual(result.issues);
        expect((error as UrsaError).message.startsWith(`${PATH}: `)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Through the service layer on a real SQLite store: a refusal writes nothing.

const REFUSALS = [
  'NAME_INVALID',
  'DOCUMENT_INVALID',
  'SCHEDULER_INVALID',
  'RECIPE_NOT_FOUND',
  'RECIPE_INVALID',
  'WORKFLOW_NOT_FOUND',
  'WORKFLOW_INVALID',
  'USER_NOT_FOUND',
  'FORBIDDEN',
];

describe('writing scheduler documents through the service (decisions §6: nothing changes on refusal)', () => {
  let t: TestRuntime;
  beforeAll(async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    await t.rt.repos.users.ensure('acme', 'ada', t.clock.now());
  });
  afterAll(async () => {
    await t.close();
  });

  const caller: Caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'write' };
  const schedulerName = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('job', 'nightly', 'a.b-c_d') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '../x', 'a/b', '.hidden', 'x'.repeat(129), 'a..b', 'sp ace'),
    },
  );
  /** Valid documents aimed at what this store has: recipe noop, mostly the caller as runAs. */
  const storable = fc.tuple(validDoc, fc.boolean()).map(([doc, keepRunAs]) => {
    const { workflow: _, ...value } = doc.value;
    value.recipe = 'noop';
    if (value.runAs !== undefined && !keepRunAs) value.runAs = 'ada';
    return value;
  });
  const input = fc.oneof(
    { weight: 3, arbitrary: storable.chain(written) },
    fc.tuple(storable, mutation).map(([value, m]) => stringify(mutate(value, m))),
    randomText,
    editedText,
  );

  it('decisions §6: every write is stored as given, or refused with a typed error naming field paths and nothing in the store changes', async () => {
    let stored = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(schedulerName, input, async (name, yaml) => {
        const before = await snapshot(t.store);
        let error: unknown;
        let result: Awaited<ReturnType<typeof setScheduler>> | undefined;
        try {
          result = await setScheduler(t.rt, caller, name, yaml);
        } catch (e) {
          error = e;
        }
        if (result !== undefined) {
          stored++;
          const doc = await t.rt.repos.documents.get({
            tenant: 'acme',
            project: 'ops',
            path: schedulerPath(name),
          });
          expect(doc?.version).toBe(result.version);
          expect(result.path).toBe(schedulerPath(name));
          // The body as written, unless the zone was filled in (spec §10c): then it names that zone.
          if (result.filledTimezone === undefined) expect(doc?.body).toBe(yaml);
          const check = validateSchedulerDocument(doc?.body ?? '', { name, path: PATH });
          expect(check.ok).toBe(true);
          if (check.ok && result.filledTimezone !== undefined)
            expect(check.definition.timezone).toBe(result.filledTimezone);
          return;
        }
        refused++;
        expect(error).toBeInstanceOf(UrsaError);
        const e = error as UrsaError;
        expect(REFUSALS).toContain(e.code);
        expect(e.status).toBeGreaterThanOrEqual(400);
        expect(e.status).toBeLessThan(500);
        if (e.code !== 'NAME_INVALID')
          expectIssues(e.issues ?? [{ path: e.field ?? '', message: e.message }], yaml);
        expect(await snapshot(t.store)).toEqual(before);
      }),
      { numRuns: 100 },
    );
    // Both sides of the property were exercised.
    expect(stored).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
  });
});
