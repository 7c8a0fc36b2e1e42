import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument } from '../../src/recipes/parse.js';
import { resolveRecipe } from '../../src/recipes/resolve.js';
import { NAME_RULE } from '../../src/scheduler/name.js';
import { applyDirectory } from '../../src/service/apply.js';
import type { Caller } from '../../src/service/caller.js';
import { deleteScheduler, setScheduler } from '../../src/service/schedulers.js';
import { getWorkflow, setWorkflow } from '../../src/service/workflows.js';
import { libraryActor } from '../../src/store/audit.js';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { ALLOWED_CHARACTERS } from '../../src/yaml/characters.js';
import { thrown } from '../support/cron.js';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, PROBLEM, SCHEDULER_YAML, type TestApp, testApp, WORKFLOW_YAML } from '../support/http.js';
import { projectFolder } from '../support/project.js';
import { snapshot } from '../support/snapshot.js';

// decisions §6: "a name outside [A-Za-z0-9][A-Za-z0-9._-]{0,127} [is] refused with the reason, and
// nothing changes" — and never `..`, so a name is always one safe path segment of
// `_vance/scheduler/<name>.yaml`. Scheduler, recipe and workflow names with `/`, `..`, NUL or 200
// characters, through the REST API (spec §10, decisions §7) and the service and tool layer (spec §9).
// The rule itself, character by character, is in test/scheduler/name.test.ts.

const LONG = 'x'.repeat(200);

/** Hostile names and how a NAME_INVALID message shows each (JSON, long ones cut at 60 characters). */
const BAD_NAMES: readonly (readonly [string, string])[] = [
  ['a/b', '"a/b"'],
  ['../../etc/passwd', '"../../etc/passwd"'],
  ['..', '".."'],
  ['a..b', '"a..b"'],
  ['nul\u0000byte', '"nul\\u0000byte"'],
  [LONG, `"${'x'.repeat(60)}…" (200 characters)`],
];

function nameInvalid(what: string, shown: string) {
  return `${what} ${shown} is not allowed: a name is ${NAME_RULE}`;
}

const SEGMENT_RULE = 'a name: letters, digits, ".", "_", "-", at most 128';

/** The route schema's refusal of a `:name` path segment. */
const BAD_SEGMENT = {
  type: 'https://ursa.dev/errors#validation_failed',
  title: 'VALIDATION_FAILED',
  status: 400,
  code: 'VALIDATION_FAILED',
  detail: `the params does not match the schema: params.name: ${SEGMENT_RULE}`,
  errors: [{ path: 'params.name', message: SEGMENT_RULE }],
};

function nameProblem(what: string, shown: string) {
  const detail = nameInvalid(what, shown);
  return {
    type: 'https://ursa.dev/errors#name_invalid',
    title: 'NAME_INVALID',
    status: 400,
    code: 'NAME_INVALID',
    detail,
    errors: [{ path: 'name', message: detail }],
    allowed: NAME_RULE,
  };
}

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** Every endpoint that takes a scheduler or workflow name in its path; `%s` is the encoded name. */
const ENDPOINTS: readonly (readonly [Method, string, unknown, 'scheduler' | 'workflow' | 'recipe'])[] = [
  ['PUT', '/brain/acme/project/ops/scheduler/%s', SCHEDULER_YAML, 'scheduler'],
  ['GET', '/brain/acme/project/ops/scheduler/%s', undefined, 'scheduler'],
  ['DELETE', '/brain/acme/project/ops/scheduler/%s', undefined, 'scheduler'],
  ['POST', '/brain/acme/project/ops/scheduler/%s/fire', undefined, 'scheduler'],
  ['GET', '/brain/acme/project/ops/scheduler/%s/events', undefined, 'scheduler'],
  ['GET', '/brain/acme/project/ops/scheduler/%s/runs', undefined, 'scheduler'],
  ['PUT', '/brain/acme/project/ops/workflows/%s', WORKFLOW_YAML, 'workflow'],
  ['GET', '/brain/acme/project/ops/workflows/%s', undefined, 'workflow'],
  ['POST', '/brain/acme/project/ops/workflows/%s/runs', { params: {} }, 'workflow'],
  ['DELETE', '/brain/acme/project/ops/workflows/%s', undefined, 'workflow'],
  ['PUT', '/brain/acme/project/ops/recipes/%s', 'description: r\nengine: noop\n', 'recipe'],
  ['GET', '/brain/acme/project/ops/recipes/%s', undefined, 'recipe'],
  ['DELETE', '/brain/acme/project/ops/recipes/%s', undefined, 'recipe'],
];

describe.each(DIALECTS)('hostile names over REST on %s (decisions §6, spec §10)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
  });
  afterAll(async () => {
    await a.close();
  });

  /** As the admin; a string payload is YAML. */
  function call(method: Method, url: string, payload: unknown) {
    const headers: Record<string, string> =
      typeof payload === 'string' ? { 'content-type': 'application/yaml' } : {};
    return a.request(method, url, a.tokens.admin, payload, headers);
  }

  it.each([
    ['a slash (%2F)', 'a%2Fb'],
    ['a climb out (../../etc)', '..%2F..%2Fetc'],
    ['a NUL (%00)', 'a%00b'],
    ['200 characters', LONG],
    ['129 characters', 'x'.repeat(129)],
    ['a leading dot', '.hidden'],
  ])('refuses a name with %s on every endpoint: 400 at params.name, nothing changed', async (_, encoded) => {
    const before = await snapshot(a.t.store);
    for (const [method, url, payload] of ENDPOINTS) {
      const res = await call(method, url.replace('%s', encoded), payload);
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json()).toEqual(BAD_SEGMENT);
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses a name with .. inside it (a..b) by the name rule: NAME_INVALID naming the value and the rule', async () => {
    const before = await snapshot(a.t.store);
    const scheduler = nameProblem('scheduler name', '"a..b"');
    const workflow = nameProblem('workflow name', '"a..b"');
    const recipe = nameProblem('recipe name', '"a..b"');
    // In ENDPOINTS order. A fire names a registered scheduler, and no valid one has this name; the
    // feed reads (events, runs) look lines up by name, and nothing has it: an empty list.
    const expected = [
      ...[scheduler, scheduler, scheduler, NOT_FOUND, 200, 200],
      ...[workflow, workflow, workflow, workflow],
      ...[recipe, recipe, recipe],
    ];
    for (const [i, [method, url, payload]] of ENDPOINTS.entries()) {
      const res = await call(method, url.replace('%s', 'a..b'), payload);
      const want = expected[i];
      if (typeof want === 'number') {
        expect(res.statusCode, `${method} ${url}`).toBe(want);
        expect(Object.values(res.json() as object)[0]).toEqual([]);
        continue;
      }
      expect(res.statusCode, `${method} ${url}`).toBe(want?.status);
      expect(res.json(), `${method} ${url}`).toEqual(want);
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('never reaches a route with a raw slash or a .. segment in the path: 404, nothing changed', async () => {
    const before = await snapshot(a.t.store);
    for (const path of ['a/b', '..', '%2E%2E', '../../../../etc/passwd']) {
      const res = await call('PUT', `/brain/acme/project/ops/scheduler/${path}`, SCHEDULER_YAML);
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses a path segment longer than the router takes, and a bad percent-encoding, as problems without echoing the path', async () => {
    const before = await snapshot(a.t.store);
    const long = await call('PUT', `/brain/acme/project/ops/scheduler/${'x'.repeat(2000)}`, SCHEDULER_YAML);
    expect(long.statusCode).toBe(400);
    expect(long.headers['content-type']).toBe(PROBLEM);
    expect(long.json()).toEqual({
      type: 'https://ursa.dev/errors#validation_failed',
      title: 'VALIDATION_FAILED',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'a segment of the URL path is longer than 1024 characters; a name is at most 128',
      errors: [{ path: 'url', message: 'a path segment is longer than 1024 characters' }],
    });
    for (const bad of ['a%zzb', 'a%E0%A4%A', '%']) {
      const res = await call('GET', `/brain/acme/project/ops/scheduler/${bad}`, undefined);
      expect(res.statusCode, bad).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json()).toEqual({
        type: 'https://ursa.dev/errors#validation_failed',
        title: 'VALIDATION_FAILED',
        status: 400,
        code: 'VALIDATION_FAILED',
        detail: 'the URL path is malformed (e.g. a bad percent-encoding)',
        errors: [{ path: 'url', message: 'malformed: every % must start a valid UTF-8 percent-encoding' }],
      });
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('accepts a name of exactly 128 characters on every scheduler endpoint (the rule’s longest)', async () => {
    const name = `a${'b'.repeat(127)}`;
    expect((await call('PUT', `/brain/acme/project/ops/scheduler/${name}`, SCHEDULER_YAML)).statusCode).toBe(
      201,
    );
    expect((await call('GET', `/brain/acme/project/ops/scheduler/${name}`, undefined)).statusCode).toBe(200);
    expect((await call('GET', `/brain/acme/project/ops/scheduler/${name}/runs`, undefined)).statusCode).toBe(
      200,
    );
    expect((await call('DELETE', `/brain/acme/project/ops/scheduler/${name}`, undefined)).statusCode).toBe(
      200,
    );
  });
});

describe.each(DIALECTS)(
  'hostile names in the service and tool layer on %s (decisions §6, spec §9)',
  (dialect) => {
    let a: TestApp;
    const admin: Caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' };
    const agent = { tenant: 'acme', project: 'ops', user: 'mia' };
    beforeAll(async () => {
      a = await testApp(dialect);
    });
    afterAll(async () => {
      await a.close();
    });

    it.each(BAD_NAMES)(
      'refuses scheduler and workflow name %j with NAME_INVALID, value and rule',
      async (name, shown) => {
        const before = await snapshot(a.t.store);
        const calls: readonly (readonly [string, () => Promise<unknown>])[] = [
          ['scheduler name', () => setScheduler(a.t.rt, admin, name, SCHEDULER_YAML)],
          ['scheduler name', () => deleteScheduler(a.t.rt, admin, name)],
          ['workflow name', () => setWorkflow(a.t.rt, admin, name, WORKFLOW_YAML)],
          ['workflow name', () => getWorkflow(a.t.rt, admin, name)],
        ];
        for (const [what, work] of calls) {
          const error = (await work().then(
            () => undefined,
            (e: unknown) => e,
          )) as UrsaError;
          expect(error?.code).toBe('NAME_INVALID');
          expect(error.message).toBe(nameInvalid(what, shown));
          expect(error.field).toBe('name');
          expect(error.value).toBe(name);
          expect(error.allowed).toBe(NAME_RULE);
        }
        for (const tool of ['scheduler_set', 'scheduler_get', 'scheduler_delete', 'scheduler_fire']) {
          const args = tool === 'scheduler_set' ? { name, yaml: SCHEDULER_YAML } : { name };
          const result = await callTool(a.t.rt, agent, TOOLS, tool, args);
          expect(result, tool).toEqual({
            ok: false,
            error: { code: 'NAME_INVALID', message: nameInvalid('scheduler name', shown) },
          });
        }
        expect(await snapshot(a.t.store)).toEqual(before);
      },
    );

    it.each(BAD_NAMES)(
      'refuses recipe name %j: in a scheduler, a workflow step, the resolver and a recipe document',
      async (name, shown) => {
        const before = await snapshot(a.t.store);
        const quoted = JSON.stringify(name);
        const inScheduler = (await setScheduler(
          a.t.rt,
          admin,
          'job',
          SCHEDULER_YAML.replace('recipe: noop', `recipe: ${quoted}`),
        ).catch((e: unknown) => e)) as UrsaError;
        // A NUL is refused by the rule for every string of a document before the name rule (issue #19).
        const refusal = (path: string) =>
          name.includes('\u0000')
            ? [
                'DOCUMENT_INVALID',
                `${path} holds the control character U+0000 at character 4; allowed: ${ALLOWED_CHARACTERS}`,
              ]
            : [
                path === 'recipe' ? 'SCHEDULER_INVALID' : 'WORKFLOW_INVALID',
                `${quoted} is not a valid name: a name is ${NAME_RULE}`,
              ];
        const [schedulerCode, schedulerMessage] = refusal('recipe');
        expect(inScheduler.code).toBe(schedulerCode);
        expect(inScheduler.issues).toEqual([{ path: 'recipe', message: schedulerMessage }]);
        const inStep = (await setWorkflow(
          a.t.rt,
          admin,
          'flow',
          WORKFLOW_YAML.replace('recipe: noop', `recipe: ${quoted}`),
        ).catch((e: unknown) => e)) as UrsaError;
        const [stepCode, stepMessage] = refusal('steps[0].recipe');
        expect(inStep.code).toBe(stepCode);
        expect(inStep.issues).toEqual([{ path: 'steps[0].recipe', message: stepMessage }]);
        const resolved = thrown(() =>
          resolveRecipe(name, { project: () => undefined, tenant: () => undefined }),
        ) as UrsaError;
        expect(resolved.code).toBe('NAME_INVALID');
        expect(resolved.message).toBe(nameInvalid('recipe name', shown));
        const parsed = thrown(() =>
          parseRecipeDocument('description: d\nengine: noop\n', {
            name,
            path: '_vance/recipes/x.yaml',
            source: 'project',
          }),
        ) as UrsaError;
        expect(parsed.code).toBe('NAME_INVALID');
        expect(await snapshot(a.t.store)).toEqual(before);
      },
    );

    it('ursa apply refuses recipe, workflow and scheduler files whose names break the rule, and stores none', async () => {
      const dir = projectFolder({
        '_vance/recipes/a..b.yaml': 'description: d\nengine: noop\n',
        '_vance/recipes/sub/x.yaml': 'description: d\nengine: noop\n',
        [`_vance/recipes/${LONG}.yaml`]: 'description: d\nengine: noop\n',
        '_vance/workflows/.hidden.yaml': WORKFLOW_YAML,
        '_vance/scheduler/nested/job.yaml': SCHEDULER_YAML,
        '_vance/scheduler/-flag.yaml': SCHEDULER_YAML,
        '_vance/scheduler/fine.yaml': SCHEDULER_YAML,
      });
      const entries = await applyDirectory(a.t.rt, dir, 'acme', 'applied', libraryActor('ada'));
      const status = Object.fromEntries(entries.map((e) => [e.path, [e.status, e.message]]));
      const invalid = (what: string, shown: string) => ['invalid', nameInvalid(what, shown)];
      expect(status).toEqual({
        '_vance/recipes/a..b.yaml': invalid('name', '"a..b"'),
        '_vance/recipes/sub/x.yaml': invalid('name', '"sub/x"'),
        [`_vance/recipes/${LONG}.yaml`]: invalid('name', `"${'x'.repeat(60)}…" (200 characters)`),
        '_vance/workflows/.hidden.yaml': invalid('name', '".hidden"'),
        '_vance/scheduler/nested/job.yaml': invalid('name', '"nested/job"'),
        '_vance/scheduler/-flag.yaml': invalid('name', '"-flag"'),
        '_vance/scheduler/fine.yaml': ['created', undefined],
      });
      const stored = await a.t.rt.repos.documents.list('acme', 'applied', '');
      expect(stored.map((d) => d.path)).toEqual(['_vance/scheduler/fine.yaml']);
    });
  },
);
