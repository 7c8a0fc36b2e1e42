import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import {
  parseSchedulerDocument,
  schedulerFromObject,
  validateSchedulerDocument,
} from '../../src/scheduler/document.js';
import { iso } from '../support/cases.js';
import { thrown } from '../support/cron.js';

const PATH = '_vance/scheduler/morning-briefing.yaml';
const options = { name: 'morning-briefing', path: PATH };

/** The error parsing `text` as the morning-briefing scheduler throws. */
function refusal(text: string): UrsaError {
  return thrown(() => parseSchedulerDocument(text, options)) as UrsaError;
}

const VALID = `description: "Spawns a briefing Process with the analyze Recipe every morning."
cron: "0 0 8 * * MON-FRI"
recipe: analyze
`;

// spec §2: the scheduler YAML schema; decisions §4: misfire and catchUpWindow.
describe('scheduler documents (spec §2)', () => {
  it('reads the spec §2 example with every field', () => {
    const definition = parseSchedulerDocument(
      `description: "Spawns a briefing Process with the analyze Recipe every morning."
cron: "0 0 8 * * MON-FRI"
timezone: "Europe/Berlin"
enabled: true
recipe: "analyze"
params:
  model: "default:fast"
  validation: false
initialMessage: |
  Create the daily briefing with the status as of 07:55 AM.
runAs: "mike"
overlap: queue
lockMode: protected
tags: [daily, briefing]
misfire: skip
catchUpWindow: PT10M
`,
      options,
    );
    expect(definition.name).toBe('morning-briefing');
    expect(definition.description).toBe('Spawns a briefing Process with the analyze Recipe every morning.');
    expect(definition.trigger.kind).toBe('cron');
    expect(definition.trigger.kind === 'cron' && definition.trigger.expression).toBe('0 0 8 * * MON-FRI');
    expect(definition.trigger.kind === 'cron' && definition.trigger.cron.normalized).toBe(
      '0 0 8 * * MON-FRI',
    );
    expect(definition.timezone).toBe('Europe/Berlin');
    expect(definition.zone.id).toBe('Europe/Berlin');
    expect(definition.enabled).toBe(true);
    expect(definition.target).toEqual({ kind: 'recipe', recipe: 'analyze' });
    expect(definition.params).toEqual({ model: 'default:fast', validation: false });
    expect(definition.initialMessage).toBe('Create the daily briefing with the status as of 07:55 AM.\n');
    expect(definition.runAs).toBe('mike');
    expect(definition.overlap).toBe('queue');
    expect(definition.lockMode).toBe('protected');
    expect(definition.tags).toEqual(['daily', 'briefing']);
    expect(definition.misfire).toBe('skip');
    expect(definition.catchUpWindow).toBe('PT10M');
    expect(definition.catchUpWindowMs).toBe(600_000);
  });

  it('applies the defaults of spec §2 and decisions §4 (enabled true, overlap skip, lockMode full, misfire once, tags [])', () => {
    const definition = parseSchedulerDocument(VALID, options);
    expect(definition).toMatchObject({
      enabled: true,
      overlap: 'skip',
      lockMode: 'full',
      misfire: 'once',
      tags: [],
      params: {},
      timezone: undefined,
      initialMessage: undefined,
      runAs: undefined,
      catchUpWindow: undefined,
      catchUpWindowMs: undefined,
      bounds: { startAt: undefined, endAt: undefined, maxRuns: undefined },
      jitter: undefined,
      jitterMs: undefined,
      pauseOnFailure: undefined,
    });
    expect(definition.zone.id).toBe('UTC');
  });

  it('accepts a workflow target instead of a recipe (spec §4.2)', () => {
    const definition = parseSchedulerDocument(
      'description: audit\ncron: "@daily"\nworkflow: daily-audit\nparams: {depth: 2}\n',
      options,
    );
    expect(definition.target).toEqual({ kind: 'workflow', workflow: 'daily-audit' });
    expect(definition.params).toEqual({ depth: 2 });
  });

  it('treats an empty timezone: like a missing one (spec §10c)', () => {
    const definition = parseSchedulerDocument(`${VALID}timezone:\n`, options);
    expect(definition.timezone).toBeUndefined();
    expect(definition.zone.id).toBe('UTC');
  });

  describe('exactly one of cron and at (spec §2)', () => {
    it('refuses both with one whole-document issue', () => {
      const error = refusal(
        'description: d\ncron: "0 0 8 * * *"\nat: "2026-05-14T08:00:00"\nrecipe: analyze\n',
      );
      expect(error.code).toBe('SCHEDULER_INVALID');
      expect(error.issues).toEqual([
        { path: '', message: 'exactly one of cron and at must be set; found both' },
      ]);
      expect(error.message).toBe(`${PATH}: exactly one of cron and at must be set; found both`);
      expect(error.field).toBeUndefined();
    });

    it('refuses neither with the same issue', () => {
      const error = refusal('description: d\nrecipe: analyze\n');
      expect(error.code).toBe('SCHEDULER_INVALID');
      expect(error.issues).toEqual([
        { path: '', message: 'exactly one of cron and at must be set; found neither' },
      ]);
    });
  });

  it('refuses both recipe and workflow, and neither (spec §2, §4)', () => {
    expect(refusal('description: d\ncron: "@daily"\nrecipe: analyze\nworkflow: audit\n').issues).toEqual([
      { path: '', message: 'exactly one of recipe and workflow must be set; found both' },
    ]);
    expect(refusal('description: d\ncron: "@daily"\n').issues).toEqual([
      { path: '', message: 'exactly one of recipe and workflow must be set; found neither' },
    ]);
  });

  it('refuses an invalid cron with the cron parser message at field cron (decisions §3)', () => {
    const error = refusal('description: d\ncron: "0 0 9 * * MON#6"\nrecipe: analyze\n');
    expect(error.code).toBe('SCHEDULER_INVALID');
    expect(error.field).toBe('cron');
    expect(error.issues).toEqual([
      { path: 'cron', message: 'day-of-week: "MON#6": the occurrence after # must be 1-5' },
    ]);
    expect(error.message).toBe(`${PATH}: cron: day-of-week: "MON#6": the occurrence after # must be 1-5`);
  });

  it('refuses a cron with five fields, naming the cron field', () => {
    expect(refusal('description: d\ncron: "0 8 * * *"\nrecipe: analyze\n').message).toBe(
      `${PATH}: cron: expression: "0 8 * * *": expected 6 fields (second minute hour day-of-month month day-of-week), found 5; the seconds field comes first, so for a Unix cron write "0 0 8 * * *"`,
    );
  });

  it('refuses a well-formed cron that never fires (decisions §3)', () => {
    const error = refusal('description: d\ncron: "0 0 0 31 2 *"\nrecipe: analyze\n');
    expect(error.issues).toEqual([
      {
        path: 'cron',
        message:
          '"0 0 0 31 2 *" never fires: no date matches its day-of-month, month and day-of-week fields together',
      },
    ]);
  });

  it('refuses an unknown time zone (spec §2)', () => {
    const error = refusal(`${VALID}timezone: Mars/Olympus_Mons\n`);
    expect(error.field).toBe('timezone');
    expect(error.issues).toEqual([
      {
        path: 'timezone',
        message:
          '"Mars/Olympus_Mons" is not an IANA time zone; expected an IANA time zone id such as Europe/Berlin, America/New_York or UTC',
      },
    ]);
  });

  it('says what each wrong-typed field expected and what it found', () => {
    const error = refusal(`${VALID}enabled: yes
params: [model]
tags: [daily, 2026]
overlap: never
lockMode: 3
misfire: true
runAs: {name: mike}
initialMessage: 42
`);
    expect(error.issues).toEqual([
      { path: 'enabled', message: 'expected a boolean (true or false), found the string "yes"' },
      { path: 'params', message: 'expected a mapping, found a list' },
      { path: 'initialMessage', message: 'expected a string, found the number 42' },
      { path: 'runAs', message: 'expected a string, found a mapping' },
      { path: 'overlap', message: 'expected one of skip, queue, cancelPrevious, found the string "never"' },
      { path: 'lockMode', message: 'expected one of full, protected, hidden, found the number 3' },
      { path: 'tags[1]', message: 'expected a string, found the number 2026' },
      { path: 'misfire', message: 'expected one of once, skip, found the boolean true' },
    ]);
    expect(error.field).toBe('enabled');
  });

  it('refuses a cron that is not a string', () => {
    expect(refusal('description: d\ncron: 5\nrecipe: analyze\n').issues).toEqual([
      { path: 'cron', message: 'expected a string, found the number 5' },
    ]);
  });

  it('refuses an unknown field and names the fields there are (strict)', () => {
    const error = refusal(`${VALID}schedule: daily\n`);
    expect(error.issues).toEqual([
      {
        path: 'schedule',
        message:
          'unknown field; the fields are description, cron, at, timezone, enabled, recipe, workflow, params, initialMessage, runAs, overlap, lockMode, tags, misfire, catchUpWindow, startAt, endAt, maxRuns, jitter, pauseOnFailure, retry',
      },
    ]);
  });

  it('refuses a missing description, and an empty one (spec §2: required)', () => {
    expect(refusal('cron: "@daily"\nrecipe: analyze\n').issues).toEqual([
      { path: 'description', message: 'is required (a string)' },
    ]);
    expect(refusal('description: "  "\ncron: "@daily"\nrecipe: analyze\n').issues).toEqual([
      { path: 'description', message: 'must not be empty' },
    ]);
  });

  it('refuses a recipe or workflow name outside the name rule (decisions §6)', () => {
    expect(refusal('description: d\ncron: "@daily"\nrecipe: ../etc/passwd\n').issues).toEqual([
      {
        path: 'recipe',
        message:
          '"../etc/passwd" is not a valid name: a name is 1 to 128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, without ".." ([A-Za-z0-9][A-Za-z0-9._-]{0,127})',
      },
    ]);
  });

  describe('catchUpWindow (decisions §4)', () => {
    it.each([
      ['PT10M', 600_000],
      ['P1D', 86_400_000],
      ['P1W', 604_800_000],
      ['PT1H30M', 5_400_000],
    ])('reads %s as %d ms', (text, ms) => {
      expect(parseSchedulerDocument(`${VALID}catchUpWindow: ${text}\n`, options).catchUpWindowMs).toBe(ms);
    });

    it.each([
      ['10m', '"10m" is not an ISO-8601 duration (e.g. PT30S, PT10M, PT1H30M, P1D)'],
      [
        'P1M',
        '"P1M" has years or months, which have no fixed length; use weeks, days, hours, minutes or seconds (e.g. P30D)',
      ],
      [
        'P1Y',
        '"P1Y" has years or months, which have no fixed length; use weeks, days, hours, minutes or seconds (e.g. P30D)',
      ],
      ['PT0S', '"PT0S" must be longer than zero'],
      ['-PT10M', '"-PT10M" is negative'],
    ])('refuses %s', (text, message) => {
      expect(refusal(`${VALID}catchUpWindow: "${text}"\n`).issues).toEqual([
        { path: 'catchUpWindow', message },
      ]);
    });

    it('refuses a number of seconds', () => {
      expect(refusal(`${VALID}catchUpWindow: 600\n`).issues).toEqual([
        { path: 'catchUpWindow', message: 'expected a string, found the number 600' },
      ]);
    });
  });

  // issue #22 item 5: startAt, endAt and maxRuns.
  describe('bounds (issue #22)', () => {
    it('reads startAt and endAt in timezone: (or with their own offset) and maxRuns', () => {
      const definition = parseSchedulerDocument(
        `${VALID}timezone: Europe/Berlin\nstartAt: "2026-05-14T08:00:00"\nendAt: "2026-06-01T00:00:00Z"\nmaxRuns: 3\n`,
        options,
      );
      expect(definition.bounds).toEqual({
        startAt: Date.parse('2026-05-14T06:00:00Z'),
        endAt: Date.parse('2026-06-01T00:00:00Z'),
        maxRuns: 3,
      });
    });

    it.each([
      ['maxRuns: 0', 'maxRuns', 'must be at least 1, found the number 0'],
      ['maxRuns: 2.5', 'maxRuns', 'expected a whole number, found the number 2.5'],
      ['maxRuns: 2000000000', 'maxRuns', 'must be at most 1000000000, found the number 2000000000'],
      ['maxRuns: "3"', 'maxRuns', 'expected a number, found the string "3"'],
      ['startAt: tomorrow', 'startAt', '"tomorrow": not a date-time'],
      ['endAt: "2026-02-30T00:00:00"', 'endAt', '"2026-02-30T00:00:00": no such date or time'],
    ])('refuses %s with the field, the value and what is allowed', (line, path, start) => {
      const issues = refusal(`${VALID}${line}\n`).issues ?? [];
      expect(issues.map((i) => i.path)).toEqual([path]);
      expect(issues[0]?.message.startsWith(start)).toBe(true);
    });

    it('refuses an endAt that is not after startAt, compared in timezone:', () => {
      expect(
        refusal(
          `${VALID}timezone: Asia/Tokyo\nstartAt: "2026-05-14T09:00:00"\nendAt: "2026-05-14T00:00:00Z"\n`,
        ).issues,
      ).toEqual([
        { path: 'endAt', message: '"2026-05-14T00:00:00Z" is not after startAt "2026-05-14T09:00:00"' },
      ]);
    });

    it('reads jitter as milliseconds, and refuses it on a one-shot and when it is no duration', () => {
      const definition = parseSchedulerDocument(`${VALID}jitter: PT30S\n`, options);
      expect([definition.jitter, definition.jitterMs]).toEqual(['PT30S', 30_000]);
      expect(refusal(`${VALID}jitter: 30s\n`).issues).toEqual([
        { path: 'jitter', message: '"30s" is not an ISO-8601 duration (e.g. PT30S, PT10M, PT1H30M, P1D)' },
      ]);
      expect(
        refusal('description: once\nat: "2026-05-14T08:00:00Z"\nrecipe: analyze\njitter: PT1M\n').issues,
      ).toEqual([
        {
          path: 'jitter',
          message: 'only a cron schedule has jitter; a one-shot fires once, at its at: instant',
        },
      ]);
    });

    it('reads pauseOnFailure, and refuses it on a one-shot and outside 1-1000 (issue #22)', () => {
      expect(parseSchedulerDocument(`${VALID}pauseOnFailure: 3\n`, options).pauseOnFailure).toBe(3);
      expect(refusal(`${VALID}pauseOnFailure: 0\n`).issues?.map((i) => i.path)).toEqual(['pauseOnFailure']);
      expect(refusal(`${VALID}pauseOnFailure: 1001\n`).issues?.map((i) => i.path)).toEqual([
        'pauseOnFailure',
      ]);
      expect(refusal(`${VALID}pauseOnFailure: 1.5\n`).issues?.map((i) => i.path)).toEqual(['pauseOnFailure']);
      expect(
        refusal('description: once\nat: "2026-05-14T08:00:00Z"\nrecipe: analyze\npauseOnFailure: 2\n').issues,
      ).toEqual([
        {
          path: 'pauseOnFailure',
          message: 'only a cron schedule has pauseOnFailure; a one-shot fires once, at its at: instant',
        },
      ]);
    });

    it('reads retry with its backoff (default PT10S), and refuses bad attempts, backoffs and fields (issue #22)', () => {
      expect(
        parseSchedulerDocument(`${VALID}retry:\n  attempts: 3\n  backoff: PT1M\n`, options).retry,
      ).toEqual({
        attempts: 3,
        backoff: 'PT1M',
        backoffMs: 60_000,
      });
      expect(parseSchedulerDocument(`${VALID}retry: {attempts: 2}\n`, options).retry).toEqual({
        attempts: 2,
        backoff: 'PT10S',
        backoffMs: 10_000,
      });
      expect(parseSchedulerDocument(VALID, options).retry).toBeUndefined();
      expect(refusal(`${VALID}retry: {attempts: 0}\n`).issues?.map((i) => i.path)).toEqual([
        'retry.attempts',
      ]);
      expect(refusal(`${VALID}retry: {attempts: 11}\n`).issues?.map((i) => i.path)).toEqual([
        'retry.attempts',
      ]);
      expect(refusal(`${VALID}retry: {backoff: PT10S}\n`).issues?.map((i) => i.path)).toEqual([
        'retry.attempts',
      ]);
      expect(refusal(`${VALID}retry: {attempts: 2, backoff: P1M}\n`).issues?.map((i) => i.path)).toEqual([
        'retry.backoff',
      ]);
      expect(refusal(`${VALID}retry: {attempts: 2, delay: PT1S}\n`).issues?.map((i) => i.path)).toEqual([
        'retry.delay',
      ]);
      expect(refusal(`${VALID}retry: 3\n`).issues?.map((i) => i.path)).toEqual(['retry']);
      expect(
        refusal('description: once\nat: "2026-05-14T08:00:00Z"\nrecipe: analyze\nretry: {attempts: 2}\n')
          .issues,
      ).toEqual([
        {
          path: 'retry',
          message: 'only a cron schedule has retries; a one-shot fires once, at its at: instant',
        },
      ]);
    });

    it('refuses bounds on a one-shot, which fires once at its at: instant', () => {
      const issues = refusal(
        'description: once\nat: "2026-05-14T08:00:00Z"\nrecipe: analyze\nmaxRuns: 2\nendAt: "2026-06-01T00:00:00Z"\n',
      ).issues;
      expect(issues?.map((i) => i.path)).toEqual(['endAt', 'maxRuns']);
      expect(issues?.[0]?.message).toBe(
        'only a cron schedule has bounds; a one-shot fires once, at its at: instant',
      );
    });
  });

  describe('at: (spec §10a, decisions §3)', () => {
    const at = (lines: string) =>
      parseSchedulerDocument(`description: once\n${lines}recipe: analyze\n`, options);

    it('reads a local date-time in timezone:', () => {
      const definition = at('at: "2026-05-14T08:00:00"\ntimezone: Europe/Berlin\n');
      expect(definition.trigger).toEqual({
        kind: 'at',
        at: '2026-05-14T08:00:00',
        instant: Date.parse('2026-05-14T06:00:00Z'),
      });
      expect(definition.zone.id).toBe('Europe/Berlin');
    });

    it('reads a local date-time as UTC without timezone:', () => {
      const definition = at('at: "2026-05-14T08:00:00"\n');
      expect(definition.trigger.kind === 'at' && iso(definition.trigger.instant)).toBe(
        '2026-05-14T08:00:00Z',
      );
    });

    it('takes an unquoted date-time as a string (YAML 1.2 core schema)', () => {
      const definition = at('at: 2026-05-14T08:00:00\ntimezone: America/New_York\n');
      expect(definition.trigger.kind === 'at' && iso(definition.trigger.instant)).toBe(
        '2026-05-14T12:00:00Z',
      );
    });

    it('lets an offset decide over timezone:', () => {
      const definition = at('at: "2026-05-14T08:00:00+05:30"\ntimezone: Europe/Berlin\n');
      expect(definition.trigger.kind === 'at' && iso(definition.trigger.instant)).toBe(
        '2026-05-14T02:30:00Z',
      );
    });

    it('moves a local time in the spring-forward gap forward by the gap', () => {
      const definition = at('at: "2026-03-29T02:30:00"\ntimezone: Europe/Berlin\n');
      expect(definition.trigger.kind === 'at' && iso(definition.trigger.instant)).toBe(
        '2026-03-29T01:30:00Z',
      );
    });

    it('refuses a value that is not a date-time, naming the accepted forms', () => {
      const error = refusal('description: once\nat: "tomorrow at 8"\nrecipe: analyze\n');
      expect(error.issues).toEqual([
        {
          path: 'at',
          message:
            '"tomorrow at 8": not a date-time; expected an ISO-8601 date-time: local 2026-05-14T08:00:00 (read in timezone:), with an offset 2026-05-14T08:00:00+02:00, or UTC 2026-05-14T06:00:00Z',
        },
      ]);
    });
  });

  it('lists every issue of a document with several, one line each, whole-document issues first', () => {
    const error = refusal(`cron: "0 0 8 * * MON-FRX"
at: "2026-05-14T08:00:00"
timezone: Europe/Berlln
enabled: "no"
recipe: analyze
overlap: sometimes
colour: blue
`);
    expect(error.code).toBe('SCHEDULER_INVALID');
    expect(error.issues?.map((issue) => issue.path)).toEqual([
      '',
      'description',
      'cron',
      'timezone',
      'enabled',
      'overlap',
      'colour',
    ]);
    expect(error.message.split('\n')).toEqual([
      `${PATH}: exactly one of cron and at must be set; found both`,
      `${PATH}: description: is required (a string)`,
      `${PATH}: cron: day-of-week: "MON-FRX": unknown name "FRX"`,
      `${PATH}: timezone: "Europe/Berlln" is not an IANA time zone; expected an IANA time zone id such as Europe/Berlin, America/New_York or UTC`,
      `${PATH}: enabled: expected a boolean (true or false), found the string "no"`,
      `${PATH}: overlap: expected one of skip, queue, cancelPrevious, found the string "sometimes"`,
      `${PATH}: colour: unknown field; the fields are description, cron, at, timezone, enabled, recipe, workflow, params, initialMessage, runAs, overlap, lockMode, tags, misfire, catchUpWindow, startAt, endAt, maxRuns, jitter, pauseOnFailure, retry`,
    ]);
  });

  it('refuses a document that is not a mapping, and an empty one', () => {
    expect(refusal('- description: d\n').issues).toEqual([
      { path: '', message: 'expected a mapping, found a list' },
    ]);
    expect(refusal('# nothing yet\n').issues).toEqual([
      {
        path: '',
        message:
          'the document is empty; expected a mapping with description, cron or at, and recipe or workflow',
      },
    ]);
  });

  it('lets a YAML refusal through as DOCUMENT_INVALID (decisions §6)', () => {
    const error = refusal(`${VALID}recipe: other\n`);
    expect(error.code).toBe('DOCUMENT_INVALID');
    expect(error.message).toBe(`${PATH}: line 4, column 1: duplicate key "recipe"`);
    expect(error.issues).toEqual([{ path: 'recipe', message: 'line 4, column 1: duplicate key "recipe"' }]);
  });

  it('refuses a scheduler name outside the name rule before reading the document (decisions §6)', () => {
    const error = thrown(() => parseSchedulerDocument(VALID, { name: '../x', path: PATH })) as UrsaError;
    expect(error.code).toBe('NAME_INVALID');
    expect(error.value).toBe('../x');
  });
});

describe('validateSchedulerDocument', () => {
  it('returns the definition of a valid document', () => {
    const result = validateSchedulerDocument(VALID, options);
    expect(result.ok).toBe(true);
    expect(result.ok && result.definition.target).toEqual({ kind: 'recipe', recipe: 'analyze' });
  });

  it('returns every schema issue without throwing', () => {
    expect(validateSchedulerDocument('description: d\nenabled: 1\n', options)).toEqual({
      ok: false,
      issues: [
        { path: '', message: 'exactly one of cron and at must be set; found neither' },
        { path: '', message: 'exactly one of recipe and workflow must be set; found neither' },
        { path: 'enabled', message: 'expected a boolean (true or false), found the number 1' },
      ],
    });
  });

  it('returns a YAML refusal as its one issue', () => {
    expect(validateSchedulerDocument('description: [d\n', options)).toEqual({
      ok: false,
      issues: [
        {
          path: '',
          message:
            'line 2, column 1: flow sequence in block collection must be sufficiently indented and end with a ]',
        },
      ],
    });
  });
});

describe('schedulerFromObject (a REST JSON body)', () => {
  it('validates plain values the same way as YAML text', () => {
    const definition = schedulerFromObject(
      { description: 'd', at: '2026-05-14T08:00:00Z', workflow: 'audit', tags: ['once'] },
      options,
    );
    expect(definition.trigger).toEqual({
      kind: 'at',
      at: '2026-05-14T08:00:00Z',
      instant: Date.parse('2026-05-14T08:00:00Z'),
    });
    expect(definition.tags).toEqual(['once']);
  });

  it('throws SCHEDULER_INVALID with the issues', () => {
    const error = thrown(() =>
      schedulerFromObject({ description: 'd', cron: '@daily', recipe: 'a', enabled: 'true' }, options),
    ) as UrsaError;
    expect(error.code).toBe('SCHEDULER_INVALID');
    expect(error.issues).toEqual([
      { path: 'enabled', message: 'expected a boolean (true or false), found the string "true"' },
    ]);
    expect(error.toJSON()).toEqual({
      code: 'SCHEDULER_INVALID',
      field: 'enabled',
      message: `${PATH}: enabled: expected a boolean (true or false), found the string "true"`,
      issues: [{ path: 'enabled', message: 'expected a boolean (true or false), found the string "true"' }],
    });
  });
});
