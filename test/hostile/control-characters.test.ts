import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { ALLOWED_CHARACTERS } from '../../src/yaml/characters.js';
import { DIALECTS } from '../support/dialects.js';
import { PROBLEM, type TestApp, testApp } from '../support/http.js';
import { projectFolder } from '../support/project.js';
import { snapshot } from '../support/snapshot.js';

// Control characters (issue #19): a NUL in a scheduler's params was accepted and then every run
// failed. Every string of every document (scheduler, recipe, workflow; values and keys, written
// raw or as a YAML escape) and every param a start sends as JSON is refused when written, with
// the field path, the character as U+XXXX, its position and what is allowed; nothing changes.
// The rule is src/yaml/characters.ts, applied by the YAML loader every document goes through and
// by the workflow start every JSON param goes through.

const BASE = '/brain/acme/project/ops';
const HEAD = 'description: hostile\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';

/** A refusal: the field path, and the reason after `<source>: `. */
interface Refused {
  readonly path: string;
  readonly reason: string;
}

/** The refusal of a string an escape (or JSON) wrote; `key` when the string is a mapping key. */
const escaped = (path: string, words: string, at: number, key = false): Refused => ({
  path,
  reason: `${key ? 'the key ' : ''}${path} holds ${words} at character ${at}; allowed: ${ALLOWED_CHARACTERS}`,
});
const raw = (path: string, line: number, column: number, words: string): Refused => ({
  path,
  reason: `line ${line}, column ${column}: ${words} is not allowed; allowed: ${ALLOWED_CHARACTERS}`,
});

/** Scheduler documents, each with one refused character, and the refusal. */
const SCHEDULERS: readonly (readonly [string, string, Refused])[] = [
  [
    'a NUL escape in a param (the case that was found)',
    `${HEAD}params:\n  topic: "a\\0b"\n`,
    escaped('params.topic', 'the control character U+0000', 2),
  ],
  [
    'a raw NUL in a param',
    `${HEAD}params:\n  topic: ab\u0000\n`,
    raw('params.topic', 6, 12, 'the control character U+0000'),
  ],
  [
    'ESC in initialMessage',
    `${HEAD}initialMessage: "\\e[2Jcleared"\n`,
    escaped('initialMessage', 'the control character U+001B', 1),
  ],
  [
    'a raw BEL in the description',
    `description: ding\u0007\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n`,
    raw('description', 1, 18, 'the control character U+0007'),
  ],
  ['DEL in a tag', `${HEAD}tags: [ok, "x\\x7f"]\n`, escaped('tags[1]', 'the control character U+007F', 2)],
  [
    'NEL (U+0085) in a param',
    `${HEAD}params:\n  topic: "\\N"\n`,
    escaped('params.topic', 'the control character U+0085', 1),
  ],
  [
    'CSI (U+009B) in a param',
    `${HEAD}params:\n  topic: "\\x9b31m"\n`,
    escaped('params.topic', 'the control character U+009B', 1),
  ],
  [
    'an unpaired surrogate in a param',
    `${HEAD}params:\n  topic: "\\ud800"\n`,
    escaped('params.topic', 'an unpaired surrogate U+D800', 1),
  ],
  [
    'a NUL in a key',
    `${HEAD}params:\n  "to\\0pic": x\n`,
    escaped('params["to\\u0000pic"]', 'the control character U+0000', 3, true),
  ],
  ['a vertical tab in a comment', `${HEAD}# note\u000b\n`, raw('', 5, 7, 'the control character U+000B')],
];

function problem(source: string, r: Refused, code = 'DOCUMENT_INVALID') {
  return {
    type: `https://ursa.dev/errors#${code.toLowerCase()}`,
    title: code,
    status: 400,
    code,
    detail: `${source}: ${r.reason}`,
    errors: [{ path: r.path, message: r.reason }],
    allowed: ALLOWED_CHARACTERS,
  };
}

describe.each(DIALECTS)('control characters on %s are refused when written (issue #19)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
    const seeded = await a.request('PUT', `${BASE}/scheduler/job`, a.tokens.write, { yaml: `${HEAD}` });
    expect(seeded.statusCode).toBe(201);
    const workflow = await a.request('PUT', `${BASE}/workflows/greet`, a.tokens.write, {
      yaml: 'description: w\nparameters:\n  topic: x\nsteps:\n  - name: one\n    recipe: noop\n',
    });
    expect(workflow.statusCode).toBe(201);
  });
  afterAll(async () => {
    await a?.close();
  });

  it.each(SCHEDULERS)(
    'refuses %s over REST, as YAML text and as {yaml}, changing nothing',
    async (_, yaml, r) => {
      const before = await snapshot(a.t.store);
      for (const name of ['job', 'fresh']) {
        for (const as of ['text', 'json'] as const) {
          const res = await a.request(
            'PUT',
            `${BASE}/scheduler/${name}`,
            a.tokens.write,
            as === 'text' ? yaml : { yaml },
            as === 'text' ? { 'content-type': 'application/yaml' } : {},
          );
          expect(res.statusCode, `${name} as ${as}: ${res.body.slice(0, 300)}`).toBe(400);
          expect(res.headers['content-type']).toBe(PROBLEM);
          expect(res.json()).toEqual(problem(`ops/_vance/scheduler/${name}.yaml`, r));
        }
      }
      expect(await snapshot(a.t.store)).toEqual(before);
    },
  );

  it('refuses an unpaired surrogate a JSON body carries raw, changing nothing', async () => {
    const before = await snapshot(a.t.store);
    const res = await a.request(
      'PUT',
      `${BASE}/scheduler/job`,
      a.tokens.write,
      `{"yaml": ${JSON.stringify(`${HEAD}params:\n  topic: a`).slice(0, -1)}\\udc00\\n"}`,
      { 'content-type': 'application/json' },
    );
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(res.json()).toEqual(
      problem('ops/_vance/scheduler/job.yaml', raw('params.topic', 6, 11, 'an unpaired surrogate U+DC00')),
    );
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it.each(SCHEDULERS)(
    'refuses %s through the agent tool scheduler_set, changing nothing',
    async (_, yaml, r) => {
      const before = await snapshot(a.t.store);
      const identity = { tenant: 'acme', project: 'ops', user: 'wes' };
      const result = await callTool(a.t.rt, identity, TOOLS, 'scheduler_set', { name: 'job', yaml });
      expect(result).toEqual({
        ok: false,
        error: {
          code: 'DOCUMENT_INVALID',
          message: `ops/_vance/scheduler/job.yaml: ${r.reason}`,
          issues: [{ path: r.path, message: r.reason }],
        },
      });
      expect(await snapshot(a.t.store)).toEqual(before);
    },
  );

  it('refuses a workflow whose step param holds a NUL, changing nothing', async () => {
    const before = await snapshot(a.t.store);
    const yaml = 'description: w\nsteps:\n  - name: one\n    recipe: noop\n    params: { topic: "\\0" }\n';
    const res = await a.request('PUT', `${BASE}/workflows/greet`, a.tokens.write, { yaml });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      problem(
        'ops/_vance/workflows/greet.yaml',
        escaped('steps[0].params.topic', 'the control character U+0000', 1),
      ),
    );
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses workflow run params holding a control character, in a value or a key, starting nothing', async () => {
    const before = await snapshot(a.t.store);
    const cases: readonly (readonly [Record<string, unknown>, Refused])[] = [
      [{ topic: 'a\u0000' }, escaped('params.topic', 'the control character U+0000', 2)],
      [
        { topic: ['ok', { deep: '\u001b[2J' }] },
        escaped('params.topic[1].deep', 'the control character U+001B', 1),
      ],
      [{ 'to\u0000pic': 'x' }, escaped('params["to\\u0000pic"]', 'the control character U+0000', 3, true)],
    ];
    for (const [params, r] of cases) {
      const res = await a.request('POST', `${BASE}/workflows/greet/runs`, a.tokens.write, { params });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
      expect(res.json()).toEqual({ ...problem('', r, 'ARGUMENT_INVALID'), detail: r.reason });
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('ursa apply reports each document holding a control character as invalid and applies the rest', async () => {
    const dir = projectFolder({
      '_vance/recipes/bell.yaml': 'description: "d\\a"\nengine: noop\n',
      '_vance/scheduler/nul.yaml': `${HEAD}params:\n  topic: "\\0"\n`,
      '_vance/scheduler/fine.yaml': `${HEAD}params:\n  topic: "tab\\tnewline\\ncr\\r é 😀 \\u00a0"\n`,
    });
    const entries = await applyDirectory(a.t.rt, dir, 'acme', 'applied', libraryActor('ada'));
    const bell = escaped('description', 'the control character U+0007', 2);
    const nul = escaped('params.topic', 'the control character U+0000', 1);
    expect(entries).toEqual([
      {
        path: '_vance/recipes/bell.yaml',
        status: 'invalid',
        message: `_vance/recipes/bell.yaml: ${bell.reason}`,
        issues: [{ path: bell.path, message: bell.reason }],
      },
      { path: '_vance/scheduler/fine.yaml', status: 'created' },
      {
        path: '_vance/scheduler/nul.yaml',
        status: 'invalid',
        message: `applied/_vance/scheduler/nul.yaml: ${nul.reason}`,
        issues: [{ path: nul.path, message: nul.reason }],
      },
    ]);
    const stored = await a.t.rt.repos.documents.list('acme', 'applied', '_vance/');
    expect(stored.map((d) => d.path)).toEqual(['_vance/scheduler/fine.yaml']);
    // Tab, line feed, carriage return and any other character arrive as written.
    const fine = await a.t.rt.repos.documents.get({
      tenant: 'acme',
      project: 'applied',
      path: stored[0]?.path ?? '',
    });
    expect(fine?.body).toContain('"tab\\tnewline\\ncr\\r é 😀 \\u00a0"');
  });
});
