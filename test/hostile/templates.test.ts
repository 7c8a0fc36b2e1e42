// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are Ursa's templates, `${{ … }}` and `${% … %}`
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_LIMITS } from '../../src/config/template-limits.js';
import { UrsaError } from '../../src/errors/index.js';
import { WorkflowRunner } from '../../src/runtime/workflow-runner.js';
import { applyDirectory } from '../../src/service/apply.js';
import { setWorkflow } from '../../src/service/workflows.js';
import { libraryActor } from '../../src/store/audit.js';
import type { WorkflowRun } from '../../src/store/workflow-runs.js';
import { DIALECTS } from '../support/dialects.js';
import { PROBLEM, type TestApp, testApp } from '../support/http.js';
import { projectFolder } from '../support/project.js';
import { testRuntime } from '../support/runtime.js';
import { snapshot } from '../support/snapshot.js';
import { until } from '../support/until.js';

// Issue #19: workflow templates are a sandbox. No tag that loads a file exists in the engine
// (refused when written, with the field path), the engine's file system refuses everything, and
// parse, render time, memory, lists and rendered size are bounded; a limit fails the step with
// Ursa's words, never the library's text (which names files and says ENOENT).

const T = 'acme';
const P = 'ops';
const BASE = `/brain/${T}/project/${P}`;
const ALLOWED = 'if, unless, case, for, break, continue, assign, capture, echo, liquid, raw, comment, #';
const MARK = 'ursa-template-secret-5c1e9';
const FIELD = 'steps[0].params.text';

let dir: string;
let secretFile: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ursa-templates-'));
  secretFile = join(dir, 'secret.txt');
  writeFileSync(secretFile, `${MARK}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A workflow of one `noop` step whose param `text` is `template`. */
function workflow(template: string, parameters = '{ topic: weather }'): string {
  return `description: d\nparameters: ${parameters}\nsteps:\n  - name: one\n    recipe: noop\n    params:\n      text: ${JSON.stringify(template)}\n`;
}

/**
 * Templates with every tag that loads, or that the sandbox removed, with paths relative to the
 * working directory (it holds package.json), in a sub-folder, absolute, outside and missing.
 */
function loadingTemplates(): [tag: string, template: string][] {
  return [
    ['include', "${% include 'package.json' %}"],
    ['include', "${% include 'src/config/schema.ts' %}"],
    ['include', `\${% include '${secretFile}' %}`],
    ['include', "${% include '../../../../etc/passwd' %}"],
    ['include', "${% include 'no/such/file.liquid' %}"],
    ['include', '${% include params.topic %}'],
    ['render', "${% render 'package.json' %}"],
    ['render', `\${% render '${secretFile}' %}`],
    ['layout', "${% layout 'package.json' %}x"],
    ['layout', `\${% layout '${secretFile}' %}x`],
    ['include', "${% liquid\ninclude 'package.json'\n%}"],
    ['block', '${% block a %}x${% endblock %}'],
    ['cycle', "${% cycle 'a', 'b' %}"],
    ['tablerow', '${% tablerow i in (1..2) %}x${% endtablerow %}'],
    ['increment', '${% increment n %}'],
    ['decrement', '${% decrement n %}'],
  ];
}

/** Text that only the library (or a file) would have put in a message or a value. */
function expectNoLeak(text: string): void {
  for (const leak of [
    MARK,
    'ENOENT',
    'line:',
    'col:',
    'limit exceeded',
    'Error',
    '"name": "ursa"',
    dir,
    '    at ',
  ])
    expect(text, `leaks ${JSON.stringify(leak)}`).not.toContain(leak);
}

describe.each(DIALECTS)('workflow templates are a sandbox on %s (issue #19)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
  });
  afterAll(async () => {
    await a.close();
  });

  /** Starts a run of `name` over REST and waits for its end; the run as the API shows it. */
  async function runOverRest(name: string, params: Record<string, unknown> = {}) {
    const started = await a.request('POST', `${BASE}/workflows/${name}/runs`, a.tokens.write, { params });
    expect(started.statusCode, started.body).toBe(201);
    const id = (started.json() as { workflowRunId: string }).workflowRunId;
    await until(async () => (await a.t.rt.repos.workflowRuns.get(T, id))?.status !== 'running');
    const shown = await a.request('GET', `${BASE}/workflow-runs/${id}`, a.tokens.read);
    return { id, body: shown.body, run: (await a.t.rt.repos.workflowRuns.get(T, id)) as WorkflowRun };
  }

  async function putWorkflow(name: string, template: string) {
    const res = await a.request('PUT', `${BASE}/workflows/${name}`, a.tokens.write, {
      yaml: workflow(template),
    });
    expect(res.statusCode, res.body).toBe(201);
  }

  it('refuses every loading or removed tag over REST with the field path and the allowed tags, whatever the path, changing nothing', async () => {
    const before = await snapshot(a.t.store);
    for (const [tag, template] of loadingTemplates()) {
      const res = await a.request('PUT', `${BASE}/workflows/leak`, a.tokens.write, {
        yaml: workflow(template),
      });
      expect(res.statusCode, template).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      const body = res.json() as { code: string; errors: unknown };
      expect(body.code).toBe('WORKFLOW_INVALID');
      expect(body.errors, template).toEqual([
        {
          path: FIELD,
          message: `uses the tag ${tag}, which templates may not use; allowed tags: ${ALLOWED}`,
        },
      ]);
      expectNoLeak(res.body);
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses the same templates through the service and ursa apply', async () => {
    const caller = { tenant: T, project: P, user: 'wes', role: 'write' as const };
    for (const [tag, template] of loadingTemplates()) {
      const error = await setWorkflow(a.t.rt, caller, 'leak', workflow(template)).catch((e: unknown) => e);
      expect(error, template).toBeInstanceOf(UrsaError);
      expect((error as UrsaError).code).toBe('WORKFLOW_INVALID');
      expect((error as UrsaError).issues).toEqual([
        {
          path: FIELD,
          message: `uses the tag ${tag}, which templates may not use; allowed tags: ${ALLOWED}`,
        },
      ]);
      expectNoLeak((error as UrsaError).message);
    }
    const folder = projectFolder({ '_vance/workflows/leak.yaml': workflow("${% include 'package.json' %}") });
    try {
      const entries = await applyDirectory(a.t.rt, folder, T, P, libraryActor('wes'));
      expect(entries.map((e) => [e.path, e.status, e.issues])).toEqual([
        [
          '_vance/workflows/leak.yaml',
          'invalid',
          [
            {
              path: FIELD,
              message: `uses the tag include, which templates may not use; allowed tags: ${ALLOWED}`,
            },
          ],
        ],
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    expect(
      await a.t.rt.repos.documents.get({ tenant: T, project: P, path: '_vance/workflows/leak.yaml' }),
    ).toBe(undefined);
  });

  it('refuses at write time what can be known then: an unknown or removed filter, bad syntax, an unclosed tag, a template over the parse limit', async () => {
    const cases: [string, string][] = [
      ['${{ params.topic | where_exp: "x", "x" }}', 'uses the filter where_exp, which templates do not have'],
      ['${{ params.topic | no_such_filter }}', 'uses the filter no_such_filter, which templates do not have'],
      ['${% if params.topic %}x', 'has a tag if that is not closed (line 1, column 1)'],
      ['ab\n${% for %}', 'is not a valid template (line 2, column 1)'],
      [
        `\${{ params.topic }}${'x'.repeat(DEFAULT_TEMPLATE_LIMITS.parseChars)}`,
        `is ${DEFAULT_TEMPLATE_LIMITS.parseChars + 19} characters long; a template may have at most ${DEFAULT_TEMPLATE_LIMITS.parseChars} (templateParseLimit)`,
      ],
    ];
    for (const [template, message] of cases) {
      const res = await a.request('PUT', `${BASE}/workflows/bad`, a.tokens.write, {
        yaml: workflow(template),
      });
      expect(res.statusCode, template).toBe(400);
      expect((res.json() as { errors: unknown }).errors, template).toEqual([{ path: FIELD, message }]);
      expectNoLeak(res.body);
    }
  });

  it('a stored document that holds a loading tag (written before this check) is refused when a run starts, and nothing runs', async () => {
    await a.t.rt.repos.documents.put(
      { tenant: T, project: P, path: '_vance/workflows/legacy.yaml' },
      workflow(`\${% include '${secretFile}' %}`),
      libraryActor('wes'),
      a.t.clock.now(),
    );
    const before = await a.t.rt.repos.workflowRuns.list(T, P, 100);
    const res = await a.request('POST', `${BASE}/workflows/legacy/runs`, a.tokens.write, { params: {} });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { errors: unknown }).errors).toEqual([
      { path: FIELD, message: `uses the tag include, which templates may not use; allowed tags: ${ALLOWED}` },
    ]);
    expectNoLeak(res.body);
    expect(await a.t.rt.repos.workflowRuns.list(T, P, 100)).toEqual(before);
  });

  it('a template in a start parameter is data: it reaches the process as written, never rendered again', async () => {
    await putWorkflow('echo', '${{ params.topic }}');
    const given = `\${% include '${secretFile}' %}\${{ params.topic }}`;
    const { run } = await runOverRest('echo', { topic: given });
    expect(run.status).toBe('completed');
    const process = await a.t.rt.repos.processes.get(run.steps[0]?.processId ?? '');
    expect(process?.params).toEqual({ text: given });
  });

  it('three nested for loops fail the step at the render limit, in Ursa words, and the API shows nothing else', async () => {
    await putWorkflow(
      'loops',
      '${% for a in (1..1000) %}${% for b in (1..1000) %}${% for c in (1..1000) %}x${% endfor %}${% endfor %}${% endfor %}',
    );
    const { run, body } = await runOverRest('loops');
    const reason = `params.text: took longer than ${DEFAULT_TEMPLATE_LIMITS.renderMs} ms to render, the limit for one step's params (templateRenderLimit)`;
    expect(run.status).toBe('failed');
    expect(run.reason).toBe(`step one: ${reason}`);
    expect(run.steps.map((s) => [s.status, s.reason, s.processId])).toEqual([['failed', reason, null]]);
    expect(body).toContain(reason);
    expectNoLeak(body);
  });

  it('output bombs fail the step with the limit they hit', async () => {
    const limits = DEFAULT_TEMPLATE_LIMITS;
    const cases: [string, string, Record<string, unknown>][] = [
      // The 163-byte template of the finding: doubling a capture 24 times would be 16 MB.
      [
        '${% capture x %}0123456789${% endcapture %}${% for i in (1..24) %}${% capture x %}${{ x }}${{ x }}${% endcapture %}${% endfor %}${{ x }}',
        `params.text: allocates more than ${limits.memoryUnits} characters and list elements, the limit for one step's params (templateMemoryLimit)`,
        {},
      ],
      [
        '${% assign x = "ab" %}${% for i in (1..40) %}${% assign x = x | append: x %}${% endfor %}${{ x }}',
        `params.text: allocates more than ${limits.memoryUnits} characters and list elements, the limit for one step's params (templateMemoryLimit)`,
        {},
      ],
      [
        '${% for i in (1..9) %}${{ params.topic }}${% endfor %}',
        `params.text: renders 73728 bytes; a param may have at most ${limits.paramBytes} (templateParamLimit)`,
        { topic: 'x'.repeat(8192) },
      ],
      [
        '${{ (1..3000) | sort | size }}',
        `params.text: gives a filter a list of 3000 elements; at most ${limits.listElements} are allowed (templateListLimit)`,
        {},
      ],
      [
        '${% assign x = params.topic %}${{ x.missing }}',
        'params.text: refers to x.missing, which is not defined here (line 1, column 35)',
        {},
      ],
    ];
    for (const [i, [template, reason, params]] of cases.entries()) {
      await putWorkflow(`bomb${i}`, template);
      const { run, body } = await runOverRest(`bomb${i}`, params);
      expect(run.reason, template).toBe(`step one: ${reason}`);
      expect(run.steps[0]?.processId).toBeNull();
      expectNoLeak(body);
    }
  });

  it("caps what a run's templates render in all, and says so in the run log and the feed of a scheduler's run", async () => {
    const t = await testRuntime('2026-06-01T08:00:00Z', {
      dialect,
      settings: { templateLimits: { ...DEFAULT_TEMPLATE_LIMITS, runBytes: 100 } },
    });
    try {
      const step = (name: string) =>
        `  - name: ${name}\n    recipe: noop\n    params: { text: "\${% for i in (1..6) %}0123456789\${% endfor %}" }\n`;
      const folder = projectFolder({
        '_vance/workflows/twice.yaml': `description: d\nsteps:\n${step('one')}${step('two')}`,
        '_vance/scheduler/night.yaml':
          'description: d\ncron: "*/10 * * * * *"\ntimezone: UTC\nworkflow: twice\n',
      });
      try {
        await applyDirectory(t.rt, folder, T, P, libraryActor('alice'));
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
      const worker = t.worker();
      t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
      await worker.tick();
      await until(
        async () => (await t.rt.repos.runs.listForScheduler(T, P, 'night', 10))[0]?.outcome === 'failed',
        'the scheduler run fails with its workflow run',
      );
      await worker.executor.settled();
      const reason =
        "params.text: brings the run's rendered params to 120 bytes; a run may render at most 100 (templateRunLimit)";
      const [run] = await t.rt.repos.workflowRuns.list(T, P, 10);
      const stored = await t.rt.repos.workflowRuns.get(T, run?.id ?? '');
      expect(stored?.steps.map((s) => [s.name, s.status, s.reason])).toEqual([
        ['one', 'completed', null],
        ['two', 'failed', reason],
      ]);
      const [ended] = await t.rt.repos.runs.listForScheduler(T, P, 'night', 10);
      const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: ended?.logPath ?? '' });
      expect(log?.body).toContain(reason);
      const feed = await t.store.db.selectFrom('feed').select('payload').execute();
      expect(feed.map((line) => line.payload).join('\n')).toContain(reason);
      for (const text of [log?.body ?? '', ...feed.map((line) => line.payload)]) expectNoLeak(text);
    } finally {
      await t.close();
    }
  });
});

describe('the render budget is one per step (issue #19)', () => {
  it("a step's templates share one memory budget (and one deadline): what each may alone, five together may not", async () => {
    const t = await testRuntime('2026-06-01T08:00:00Z');
    try {
      const params = Array.from({ length: 5 }, (_, i) => `      p${i}: "\${{ params.big }}"\n`).join('');
      const folder = projectFolder({
        '_vance/workflows/many.yaml': `description: d\nparameters: { big: ~ }\nsteps:\n  - name: one\n    recipe: noop\n    params:\n${params}`,
      });
      try {
        await applyDirectory(t.rt, folder, T, P, libraryActor('alice'));
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
      const big = 'x'.repeat(60_000);
      const { done } = await new WorkflowRunner(t.rt).start(T, P, 'many', { big }, 'alice');
      expect(await done).toEqual({
        status: 'failed',
        reason: `step one: params.p4: allocates more than ${DEFAULT_TEMPLATE_LIMITS.memoryUnits} characters and list elements, the limit for one step's params (templateMemoryLimit)`,
      });
    } finally {
      await t.close();
    }
  });
});
