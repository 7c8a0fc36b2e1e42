import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/runtime/worker.js';
import { libraryActor } from '../../src/store/audit.js';
import { controlledEngine } from '../support/engine.js';
import { NOT_FOUND, PROBLEM, type TestApp, testApp } from '../support/http.js';
import { until } from '../support/until.js';

// Spec §10 scheduler endpoints through inject() on SQLite: list, detail, idempotent PUT, DELETE,
// refresh, fire (through the overlap policy), events and runs. Auth and the 404 matrix over every
// endpoint are in auth.test.ts.

const BASE = '/brain/acme/project/ops/scheduler';
const YAML_A = 'description: nightly job\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';
const YAML_B = 'description: nightly job, later\ncron: "0 30 3 * * *"\ntimezone: UTC\nrecipe: noop\n';

let a: TestApp;
beforeEach(async () => {
  a = await testApp('sqlite');
});
afterEach(async () => {
  await a.close();
});

const putYaml = (name: string, yaml: string, token = a.tokens.write) =>
  a.request('PUT', `${BASE}/${name}`, token, yaml, { 'content-type': 'application/yaml' });

async function archive(path: string) {
  return a.t.store.db
    .selectFrom('document_archive')
    .select(['version', 'body', 'reason'])
    .where('tenant', '=', 'acme')
    .where('project', '=', 'ops')
    .where('path', '=', path)
    .orderBy('version')
    .execute();
}

describe('PUT /scheduler/{name} (spec §10: create/update, idempotent)', () => {
  it('creates with 201; the same body again answers 200 created=false without a new version; a new body is version 2 and archives the old', async () => {
    const first = await a.request('PUT', `${BASE}/job`, a.tokens.write, { yaml: YAML_A });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      path: '_vance/scheduler/job.yaml',
      created: true,
      version: 1,
      warnings: [],
      filledTimezone: null,
    });

    a.t.clock.set(Date.parse('2026-06-01T08:05:00Z'));
    const again = await putYaml('job', YAML_A);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({
      path: '_vance/scheduler/job.yaml',
      created: false,
      version: 1,
      warnings: [],
      filledTimezone: null,
    });
    const unchanged = await a.t.rt.repos.documents.get({
      tenant: 'acme',
      project: 'ops',
      path: '_vance/scheduler/job.yaml',
    });
    expect(unchanged).toMatchObject({
      version: 1,
      body: YAML_A,
      updatedAt: Date.parse('2026-06-01T08:00:00Z'),
    });
    expect(await archive('_vance/scheduler/job.yaml')).toEqual([]);

    const changed = await putYaml('job', YAML_B);
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toEqual({
      path: '_vance/scheduler/job.yaml',
      created: false,
      version: 2,
      warnings: [],
      filledTimezone: null,
    });
    expect(await archive('_vance/scheduler/job.yaml')).toEqual([
      { version: 1, body: YAML_A, reason: 'replaced' },
    ]);
    const detail = await a.request('GET', `${BASE}/job`, a.tokens.read);
    expect(detail.json()).toMatchObject({ version: 2, yaml: YAML_B, updatedAt: '2026-06-01T08:05:00Z' });
  });

  it("fills a missing timezone with the caller's display zone (spec §10c)", async () => {
    const res = await putYaml('job', 'description: nightly job\ncron: "0 0 3 * * *"\nrecipe: noop\n');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ created: true, version: 1, filledTimezone: 'UTC' });
    const detail = await a.request('GET', `${BASE}/job`, a.tokens.read);
    expect(detail.json().yaml).toBe(YAML_A);
  });

  it('refuses an invalid document with 400 problem+json listing every field path, and writes nothing', async () => {
    const res = await putYaml(
      'job',
      'description: broken\ncron: "99 * * * * *"\nrecipe: noop\ncolour: red\n',
    );
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    const fields =
      'description, cron, at, timezone, enabled, recipe, workflow, params, initialMessage, runAs, overlap, lockMode, tags, misfire, catchUpWindow, startAt, endAt, maxRuns, jitter, pauseOnFailure, retry';
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#scheduler_invalid',
      title: 'SCHEDULER_INVALID',
      status: 400,
      code: 'SCHEDULER_INVALID',
      detail: `ops/_vance/scheduler/job.yaml: cron: second: "99": 99 is out of range\nops/_vance/scheduler/job.yaml: colour: unknown field; the fields are ${fields}`,
      errors: [
        { path: 'cron', message: 'second: "99": 99 is out of range' },
        { path: 'colour', message: `unknown field; the fields are ${fields}` },
      ],
    });
    expect(
      await a.t.rt.repos.documents.get({ tenant: 'acme', project: 'ops', path: '_vance/scheduler/job.yaml' }),
    ).toBeUndefined();
  });

  it('refuses an unknown field of the JSON body, a wrong body type and a bad name with 400 and the field path', async () => {
    const extra = await a.request('PUT', `${BASE}/job`, a.tokens.write, { yaml: YAML_A, extra: 1 });
    expect(extra.statusCode).toBe(400);
    expect(extra.headers['content-type']).toBe(PROBLEM);
    expect(extra.json()).toEqual({
      type: 'https://ursa.dev/errors#validation_failed',
      title: 'VALIDATION_FAILED',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'the body does not match the schema: body.extra: unknown field',
      errors: [{ path: 'body.extra', message: 'unknown field' }],
    });

    // issue #23: a near miss of a field is named, from the route's schema.
    const pause = await a.request('POST', `${BASE}/job/pause`, a.tokens.write, { nte: 'down' });
    expect(pause.statusCode).toBe(400);
    expect(pause.json()).toMatchObject({
      detail: 'the body does not match the schema: body.nte: unknown field (did you mean "note"?)',
      errors: [{ path: 'body.nte', message: 'unknown field (did you mean "note"?)' }],
    });

    // The body is YAML text or {yaml}: a wrong type inside {yaml} is named at its field, from the
    // union branch that got deepest (see problem.ts).
    const wrongType = await a.request('PUT', `${BASE}/job`, a.tokens.write, { yaml: 42 });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'body.yaml', message: 'Invalid input: expected string, received number' }],
    });

    const badSegment = await putYaml('..job', YAML_A);
    expect(badSegment.statusCode).toBe(400);
    expect(badSegment.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'params.name', message: 'a name: letters, digits, ".", "_", "-", at most 128' }],
    });

    const badName = await putYaml('_job', YAML_A);
    expect(badName.statusCode).toBe(400);
    expect(badName.json()).toMatchObject({ code: 'NAME_INVALID', status: 400 });
  });

  it('refuses a runAs of another user from a write token (403), accepts it from an admin', async () => {
    await a.t.rt.repos.users.ensure('acme', 'ursula', a.t.clock.now());
    const yaml = `${YAML_A}runAs: ursula\n`;
    const byWriter = await putYaml('job', yaml);
    expect(byWriter.statusCode).toBe(403);
    expect(byWriter.json()).toEqual({
      type: 'https://ursa.dev/errors#forbidden',
      title: 'FORBIDDEN',
      status: 403,
      code: 'FORBIDDEN',
      detail:
        'ops/_vance/scheduler/job.yaml: runAs: only an admin may name another user than the caller (wes)',
      errors: [{ path: 'runAs', message: 'only an admin may name another user than the caller (wes)' }],
    });
    const byAdmin = await putYaml('job', yaml, a.tokens.admin);
    expect(byAdmin.statusCode).toBe(201);
  });
});

describe('GET /scheduler and /scheduler/{name}', () => {
  it('lists the schedulers of a project with their next run, and shows one with its YAML', async () => {
    await putYaml('job', YAML_A);
    await putYaml(
      'hourly',
      'description: hourly\ncron: "0 0 * * * *"\ntimezone: Europe/Berlin\nrecipe: noop\n',
    );
    const list = await a.request('GET', BASE, a.tokens.read);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      schedulers: [
        {
          name: 'hourly',
          description: 'hourly',
          cron: '0 0 * * * *',
          at: null,
          timezone: 'Europe/Berlin',
          enabled: true,
          overlap: 'skip',
          lockMode: 'full',
          tags: [],
          source: 'project',
          nextRunAt: '2026-06-01T09:00:00Z',
          overdue: false,
          lastRun: null,
          paused: null,
          bounds: null,
        },
        {
          name: 'job',
          description: 'nightly job',
          cron: '0 0 3 * * *',
          at: null,
          timezone: 'UTC',
          enabled: true,
          overlap: 'skip',
          lockMode: 'full',
          tags: [],
          source: 'project',
          nextRunAt: '2026-06-02T03:00:00Z',
          overdue: false,
          lastRun: null,
          paused: null,
          bounds: null,
        },
      ],
      invalid: [],
    });

    const detail = await a.request('GET', `${BASE}/job`, a.tokens.read);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toEqual({
      name: 'job',
      path: '_vance/scheduler/job.yaml',
      source: 'project',
      version: 1,
      yaml: YAML_A,
      createdBy: 'wes',
      updatedAt: '2026-06-01T08:00:00Z',
      nextRunAt: '2026-06-02T03:00:00Z',
      paused: null,
    });
  });

  it('answers a missing scheduler with the uniform 404 problem', async () => {
    const res = await a.request('GET', `${BASE}/nope`, a.tokens.read);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.json()).toEqual(NOT_FOUND);
  });
});

describe('DELETE /scheduler/{name}', () => {
  it('moves the document to the trash; afterwards detail, fire and DELETE answer 404', async () => {
    await putYaml('job', YAML_A);
    const res = await a.request('DELETE', `${BASE}/job`, a.tokens.write);
    expect(res.statusCode).toBe(200);
    expect(res.json().trashPath).toMatch(/^_vance\/trash\/[0-9a-f-]{36}_job\.yaml$/);
    expect((await a.request('GET', BASE, a.tokens.read)).json()).toEqual({ schedulers: [], invalid: [] });
    for (const [method, url] of [
      ['GET', `${BASE}/job`],
      ['POST', `${BASE}/job/fire`],
      ['DELETE', `${BASE}/job`],
    ] as const) {
      const gone = await a.request(method, url, a.tokens.write);
      expect(gone.statusCode, `${method} ${url}`).toBe(404);
      expect(gone.json()).toEqual(NOT_FOUND);
    }
  });
});

describe('POST /scheduler/refresh (spec §8)', () => {
  it('re-reads the project and lists what fires and what is invalid', async () => {
    await putYaml('job', YAML_A);
    await a.t.rt.repos.documents.put(
      { tenant: 'acme', project: 'ops', path: '_vance/scheduler/bad.yaml' },
      'description: broken\ncron: "0 0 3 * * *"\nrecipe: noop\nextra: 1\n',
      libraryActor('wes'),
      a.t.clock.now(),
    );
    const res = await a.request('POST', `${BASE}/refresh`, a.tokens.admin);
    expect(res.statusCode).toBe(200);
    const fields =
      'description, cron, at, timezone, enabled, recipe, workflow, params, initialMessage, runAs, overlap, lockMode, tags, misfire, catchUpWindow, startAt, endAt, maxRuns, jitter, pauseOnFailure, retry';
    expect(res.json()).toEqual({
      active: true,
      registered: ['job'],
      invalid: [
        {
          path: '_vance/scheduler/bad.yaml',
          message: `ops/_vance/scheduler/bad.yaml: extra: unknown field; the fields are ${fields}`,
        },
      ],
    });
  });
});

describe('POST /scheduler/{name}/fire obeys the overlap policy (spec §5, §9)', () => {
  const HELD = 'description: held by the test\nengine: held\n';
  const SKIP = 'description: overlap test\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: held\noverlap: skip\n';

  async function setup() {
    const engine = controlledEngine();
    a.t.rt.engines.register(engine);
    await a.t.rt.repos.documents.put(
      { tenant: 'acme', project: 'ops', path: '_vance/recipes/held.yaml' },
      HELD,
      libraryActor('wes'),
      a.t.clock.now(),
    );
    expect((await putYaml('job', SKIP)).statusCode).toBe(201);
    const worker = a.t.worker();
    await worker.bootstrap();
    return { engine, worker };
  }

  async function fire(worker: Worker, at: string) {
    a.t.clock.set(Date.parse(at));
    const res = await a.request('POST', `${BASE}/job/fire`, a.tokens.write);
    expect(res.statusCode).toBe(202);
    const body = res.json() as { correlationId: string; logPath: string };
    expect(body.correlationId).toMatch(/^run_[0-9a-f-]{36}$/);
    const stamp = at.replaceAll('-', '').replaceAll(':', '');
    expect(body.logPath).toBe(`_vance/logs/scheduler/job/${stamp}-${body.correlationId}.md`);
    await worker.reap();
    return body;
  }

  const outcome = async (correlationId: string) =>
    (await a.request('GET', `/brain/acme/project/ops/runs/${correlationId}`, a.tokens.read)).json() as {
      state: string;
      outcome: string;
      reason: string | null;
      trigger: string;
    };

  it('skip: a fire while the previous run is active ends skipped_overlap; with nothing active it completes', async () => {
    const { engine, worker } = await setup();
    const started = engine.started();
    const first = await fire(worker, '2026-06-01T08:00:03Z');
    const held = await started;
    expect(held.request.context.correlationId).toBe(first.correlationId);

    const second = await fire(worker, '2026-06-01T08:00:04Z');
    await until(
      async () => (await a.t.rt.repos.runs.get(second.correlationId))?.state === 'skipped',
      'the second fire is skipped',
    );
    expect(await outcome(second.correlationId)).toMatchObject({
      trigger: 'manual',
      state: 'skipped',
      outcome: 'skipped_overlap',
      reason: 'overlap',
    });

    held.finish();
    await worker.executor.settled();
    expect(await outcome(first.correlationId)).toMatchObject({ state: 'ended', outcome: 'completed' });

    const next = engine.started();
    const third = await fire(worker, '2026-06-01T08:00:05Z');
    (await next).finish();
    await worker.executor.settled();
    expect(await outcome(third.correlationId)).toMatchObject({
      trigger: 'manual',
      state: 'ended',
      outcome: 'completed',
      reason: null,
    });
    expect(engine.processes).toHaveLength(2);

    // The feed through REST: newest first, every instant ISO-8601, paged with nextCursor.
    const events = await a.request('GET', `${BASE}/job/events`, a.tokens.read);
    expect(events.statusCode).toBe(200);
    const lines = events.json().events as { kind: string; outcome: string; traceId: string; at: string }[];
    expect(lines.map((l) => [l.kind, l.outcome, l.traceId, l.at])).toEqual([
      ['END', 'completed', third.correlationId, '2026-06-01T08:00:05Z'],
      ['START', 'pending', third.correlationId, '2026-06-01T08:00:05Z'],
      ['END', 'completed', first.correlationId, '2026-06-01T08:00:04Z'],
      ['SKIPPED', 'skipped_overlap', second.correlationId, '2026-06-01T08:00:04Z'],
      ['START', 'pending', first.correlationId, '2026-06-01T08:00:03Z'],
    ]);
    expect(events.json().nextCursor).toBeNull();
    expect(events.json().events[4].payload).toMatchObject({
      trigger: 'manual',
      scheduledFor: '2026-06-01T08:00:03.001Z',
      coalesced: false,
      coalescedUntil: null,
      runAs: 'wes',
    });

    const page1 = await a.request('GET', `${BASE}/job/events?limit=2`, a.tokens.read);
    expect(page1.json().events.map((l: { id: number }) => l.id)).toEqual([5, 4]);
    expect(page1.json().nextCursor).toBe(4);
    const page2 = await a.request('GET', `${BASE}/job/events?limit=2&before=4`, a.tokens.read);
    expect(page2.json().events.map((l: { id: number }) => l.id)).toEqual([3, 2]);

    const runs = await a.request('GET', `${BASE}/job/runs?limit=2`, a.tokens.read);
    expect(runs.statusCode).toBe(200);
    expect(
      runs.json().runs.map((r: { correlationId: string; outcome: string }) => [r.correlationId, r.outcome]),
    ).toEqual([
      [third.correlationId, 'completed'],
      [second.correlationId, 'skipped_overlap'],
    ]);
    const older = await a.request(
      'GET',
      `${BASE}/job/runs?limit=2&before=${runs.json().nextCursor}`,
      a.tokens.read,
    );
    expect(older.json()).toEqual({
      runs: [
        {
          correlationId: first.correlationId,
          scheduler: 'job',
          trigger: 'manual',
          scheduledFor: '2026-06-01T08:00:03.001Z',
          state: 'ended',
          startedAt: '2026-06-01T08:00:03Z',
          endedAt: '2026-06-01T08:00:04Z',
          outcome: 'completed',
          durationMs: 1000,
          coalesced: false,
          coalescedUntil: null,
          reason: null,
          attempt: 1,
          processId: held.request.processId,
          sessionId: expect.stringMatching(/^sess_/),
          logPath: first.logPath,
          queuedAt: null,
          waitingBehind: null,
          foldedInto: null,
          folded: null,
        },
      ],
      nextCursor: null,
    });
  });

  it('refuses a bad page query with 400 and the field paths', async () => {
    await putYaml('job', YAML_A);
    for (const url of [`${BASE}/job/events?limit=0`, `${BASE}/job/runs?limit=0`]) {
      const res = await a.request('GET', url, a.tokens.read);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json().errors).toEqual([
        { path: 'querystring.limit', message: 'Too small: expected number to be >=1' },
      ]);
    }
    const res = await a.request('GET', `${BASE}/job/events?limit=abc&before=-1&page=2`, a.tokens.read);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual([
      'querystring.limit',
      'querystring.before',
      'querystring.page',
    ]);
  });
});
