import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/runtime/worker.js';
import { libraryActor } from '../../src/store/audit.js';
import { controlledEngine } from '../support/engine.js';
import { NOT_FOUND, PROBLEM, SCHEDULER_YAML, type TestApp, testApp } from '../support/http.js';

// The resources beside the scheduler endpoints (issue #7, decisions §7) through inject() on
// SQLite: a run with its log, documents, processes, the inbox and the tenant-wide refresh.

const PROJECT = '/brain/acme/project/ops';

let a: TestApp;
beforeEach(async () => {
  a = await testApp('sqlite');
});
afterEach(async () => {
  await a.close();
});

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

async function put(project: string, name: string, yaml: string) {
  const res = await a.request('PUT', `/brain/acme/project/${project}/scheduler/${name}`, a.tokens.write, {
    yaml,
  });
  expect(res.statusCode).toBe(201);
}

async function fire(worker: Worker, project: string, name: string) {
  const res = await a.request(
    'POST',
    `/brain/acme/project/${project}/scheduler/${name}/fire`,
    a.tokens.write,
  );
  expect(res.statusCode).toBe(202);
  await worker.reap();
  await worker.executor.settled();
  return res.json() as { correlationId: string; logPath: string };
}

async function startedWorker() {
  const worker = a.t.worker();
  await worker.bootstrap();
  return worker;
}

describe('GET /runs/{correlationId}', () => {
  it('answers the run from the runs table with ISO instants and its run-log document', async () => {
    await put('ops', 'job', SCHEDULER_YAML);
    const worker = await startedWorker();
    a.t.clock.set(Date.parse('2026-06-01T08:00:07.250Z'));
    const fired = await fire(worker, 'ops', 'job');
    const res = await a.request('GET', `${PROJECT}/runs/${fired.correlationId}`, a.tokens.read);
    expect(res.statusCode).toBe(200);
    const run = await a.t.rt.repos.runs.get(fired.correlationId);
    const log = await a.t.rt.repos.documents.get({ tenant: 'acme', project: 'ops', path: fired.logPath });
    expect(log?.body).toContain('outcome: completed');
    expect(res.json()).toEqual({
      correlationId: fired.correlationId,
      tenant: 'acme',
      project: 'ops',
      scheduler: 'job',
      trigger: 'manual',
      scheduledFor: '2026-06-01T08:00:07.250Z',
      coalesced: false,
      coalescedUntil: null,
      claimedAt: '2026-06-01T08:00:07.250Z',
      state: 'ended',
      outcome: 'completed',
      reason: null,
      runAs: 'wes',
      sessionId: run?.sessionId,
      processId: run?.processId,
      startedAt: '2026-06-01T08:00:07.250Z',
      endedAt: '2026-06-01T08:00:07.250Z',
      workerId: worker.id,
      attempt: 1,
      fencingToken: run?.fencingToken,
      queuedAt: null,
      waitingBehind: null,
      foldedInto: null,
      folded: null,
      output: null,
      logPath: fired.logPath,
      log: log?.body,
    });
  });

  it('answers log null once the run log is gone, and 404 for a run of another project or an unknown id', async () => {
    await put('ops', 'job', SCHEDULER_YAML);
    await put('web', 'job', SCHEDULER_YAML);
    const worker = await startedWorker();
    const ops = await fire(worker, 'ops', 'job');
    const web = await fire(worker, 'web', 'job');
    await a.t.store.db.deleteFrom('documents').where('path', '=', ops.logPath).execute();
    const res = await a.request('GET', `${PROJECT}/runs/${ops.correlationId}`, a.tokens.read);
    expect(res.json()).toMatchObject({ correlationId: ops.correlationId, outcome: 'completed', log: null });

    for (const id of [web.correlationId, 'run_unknown']) {
      const missing = await a.request('GET', `${PROJECT}/runs/${id}`, a.tokens.read);
      expect(missing.statusCode).toBe(404);
      expect(missing.headers['content-type']).toBe(PROBLEM);
      expect(missing.json()).toEqual(NOT_FOUND);
    }
    const bad = await a.request('GET', `${PROJECT}/runs/run%20x`, a.tokens.read);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      { path: 'params.correlationId', message: 'an id: letters, digits, ".", "_", "-"' },
    ]);
  });
});

describe('documents', () => {
  async function seed() {
    const docs = a.t.rt.repos.documents;
    const at = (iso: string) => Date.parse(iso);
    await docs.put(
      { tenant: 'acme', project: 'ops', path: 'notes/a.md' },
      'A',
      libraryActor('rita'),
      at('2026-06-01T07:00:00Z'),
    );
    await docs.put(
      { tenant: 'acme', project: 'ops', path: 'notes/b.md' },
      'B1',
      libraryActor('wes'),
      at('2026-06-01T07:10:00Z'),
    );
    await docs.put(
      { tenant: 'acme', project: 'ops', path: 'notes/b.md' },
      'B2',
      libraryActor('ada'),
      at('2026-06-01T07:20:00Z'),
    );
    await docs.put(
      { tenant: 'acme', project: 'ops', path: 'notes/c.md' },
      'C',
      libraryActor('wes'),
      at('2026-06-01T07:30:00Z'),
      at('2026-06-08T07:30:00.500Z'),
    );
    await docs.put(
      { tenant: 'acme', project: 'ops', path: 'other/x.md' },
      'X',
      libraryActor('wes'),
      at('2026-06-01T07:40:00Z'),
    );
    await docs.put(
      { tenant: 'acme', project: 'web', path: 'notes/w.md' },
      'W',
      libraryActor('wes'),
      at('2026-06-01T07:50:00Z'),
    );
  }

  it('lists by prefix, sorted by path, without bodies, paged with limit and after', async () => {
    await seed();
    const res = await a.request('GET', `${PROJECT}/documents?prefix=notes/`, a.tokens.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      documents: [
        {
          path: 'notes/a.md',
          version: 1,
          createdBy: 'rita',
          updatedAt: '2026-06-01T07:00:00Z',
          expiresAt: null,
        },
        {
          path: 'notes/b.md',
          version: 2,
          createdBy: 'wes',
          updatedAt: '2026-06-01T07:20:00Z',
          expiresAt: null,
        },
        {
          path: 'notes/c.md',
          version: 1,
          createdBy: 'wes',
          updatedAt: '2026-06-01T07:30:00Z',
          expiresAt: '2026-06-08T07:30:00.500Z',
        },
      ],
      nextCursor: null,
    });

    const page1 = await a.request('GET', `${PROJECT}/documents?prefix=notes/&limit=2`, a.tokens.read);
    expect(page1.json().documents.map((d: { path: string }) => d.path)).toEqual(['notes/a.md', 'notes/b.md']);
    expect(page1.json().nextCursor).toBe('notes/b.md');
    const page2 = await a.request(
      'GET',
      `${PROJECT}/documents?prefix=notes/&limit=2&after=notes/b.md`,
      a.tokens.read,
    );
    expect(page2.json()).toMatchObject({ documents: [{ path: 'notes/c.md' }], nextCursor: null });

    const all = await a.request('GET', `${PROJECT}/documents`, a.tokens.read);
    expect(all.json().documents.map((d: { path: string }) => d.path)).toEqual([
      'notes/a.md',
      'notes/b.md',
      'notes/c.md',
      'other/x.md',
    ]);
    // The prefix is literal: `_` and `%` are not wildcards, and case counts.
    const none = await a.request('GET', `${PROJECT}/documents?prefix=NOTES`, a.tokens.read);
    expect(none.json()).toEqual({ documents: [], nextCursor: null });
  });

  it('refuses a bad limit and unknown query fields with 400 and their paths', async () => {
    const res = await a.request('GET', `${PROJECT}/documents?limit=5000&sort=path`, a.tokens.read);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#validation_failed',
      title: 'VALIDATION_FAILED',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail:
        'the querystring does not match the schema: querystring.limit: Too big: expected number to be <=1000; querystring.sort: unknown field',
      errors: [
        { path: 'querystring.limit', message: 'Too big: expected number to be <=1000' },
        { path: 'querystring.sort', message: 'unknown field' },
      ],
    });
  });

  it('reads one document by its path (the wildcard), and 404 for a missing one or one of another project', async () => {
    await seed();
    const res = await a.request('GET', `${PROJECT}/documents/notes/b.md`, a.tokens.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      path: 'notes/b.md',
      version: 2,
      body: 'B2',
      createdBy: 'wes',
      updatedAt: '2026-06-01T07:20:00Z',
      expiresAt: null,
    });
    for (const path of ['notes/missing.md', 'notes/w.md', 'notes']) {
      const missing = await a.request('GET', `${PROJECT}/documents/${path}`, a.tokens.read);
      expect(missing.statusCode, path).toBe(404);
      expect(missing.json()).toEqual(NOT_FOUND);
    }
    const empty = await a.request('GET', `${PROJECT}/documents/`, a.tokens.read);
    expect(empty.statusCode).toBe(400);
    expect(empty.json().errors).toEqual([{ path: 'params.*', message: 'a document path is required' }]);
  });

  it('reads a run log by the logPath a fire returned', async () => {
    await put('ops', 'job', SCHEDULER_YAML);
    const fired = await fire(await startedWorker(), 'ops', 'job');
    const res = await a.request('GET', `${PROJECT}/documents/${fired.logPath}`, a.tokens.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      path: fired.logPath,
      createdBy: 'ursa',
      updatedAt: '2026-06-01T08:00:00Z',
      expiresAt: '2026-06-08T08:00:00Z',
    });
    expect(res.json().body).toContain(`correlationId: ${fired.correlationId}\ntrigger: manual\n`);
    expect(res.json().body).toContain('outcome: completed');
  });
});

describe('processes', () => {
  const HELD = 'description: held by the test\nengine: held\n';
  const JOB = 'description: held job\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: held\n';

  it('shows a running process and stops it with a reason; the run ends cancelled; a second stop says false', async () => {
    const engine = controlledEngine();
    a.t.rt.engines.register(engine);
    await a.t.rt.repos.documents.put(
      { tenant: 'acme', project: 'ops', path: '_vance/recipes/held.yaml' },
      HELD,
      libraryActor('wes'),
      a.t.clock.now(),
    );
    await put('ops', 'job', JOB);
    const worker = await startedWorker();
    const started = engine.started();
    a.t.clock.set(Date.parse('2026-06-01T08:00:01Z'));
    const fired = (await a.request('POST', `${PROJECT}/scheduler/job/fire`, a.tokens.write)).json();
    await worker.reap();
    const held = await started;
    const id = held.request.processId;

    const res = await a.request('GET', `${PROJECT}/processes/${id}`, a.tokens.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id,
      tenant: 'acme',
      project: 'ops',
      sessionId: expect.stringMatching(/^sess_/),
      recipe: 'held',
      engine: 'held',
      status: 'running',
      ownerUser: 'wes',
      triggerOrigin: {
        source: 'ursascheduler:job',
        scheduledFor: '2026-06-01T08:00:01.001Z',
        correlationId: fired.correlationId,
        trigger: 'manual',
      },
      params: {},
      initialMessage: null,
      createdAt: '2026-06-01T08:00:01Z',
      startedAt: '2026-06-01T08:00:01Z',
      endedAt: null,
      exitCode: null,
      reason: null,
      outputTail: null,
      errorTail: null,
    });

    a.t.clock.set(Date.parse('2026-06-01T08:00:02Z'));
    const stop = await a.request('POST', `${PROJECT}/processes/${id}/stop`, a.tokens.write, {
      reason: 'no longer needed',
    });
    expect(stop.statusCode).toBe(200);
    expect(stop.json()).toEqual({ stopping: true });
    await worker.reap();
    expect(await held.stopped).toBe('no longer needed');
    await worker.executor.settled();

    const after = await a.request('GET', `${PROJECT}/processes/${id}`, a.tokens.read);
    expect(after.json()).toMatchObject({
      status: 'stopped',
      reason: 'no longer needed',
      endedAt: '2026-06-01T08:00:02Z',
    });
    const run = await a.request('GET', `${PROJECT}/runs/${fired.correlationId}`, a.tokens.read);
    expect(run.json()).toMatchObject({ state: 'ended', outcome: 'cancelled', reason: 'no longer needed' });

    // Stopping an ended process is not an error; the body is optional.
    const again = await a.request('POST', `${PROJECT}/processes/${id}/stop`, a.tokens.write);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ stopping: false });
  });

  it('answers 404 for an unknown process or one of another project, and 400 for an unknown body field', async () => {
    await put('web', 'job', SCHEDULER_YAML);
    const fired = await fire(await startedWorker(), 'web', 'job');
    const processId = (await a.t.rt.repos.runs.get(fired.correlationId))?.processId as string;
    expect(
      (await a.request('GET', `/brain/acme/project/web/processes/${processId}`, a.tokens.read)).statusCode,
    ).toBe(200);
    for (const [method, url] of [
      ['GET', `${PROJECT}/processes/${processId}`],
      ['POST', `${PROJECT}/processes/${processId}/stop`],
      ['GET', `${PROJECT}/processes/proc_unknown`],
      ['POST', `${PROJECT}/processes/proc_unknown/stop`],
    ] as const) {
      const res = await a.request(method, url, a.tokens.write);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    }
    const bad = await a.request(
      'POST',
      `/brain/acme/project/web/processes/${processId}/stop`,
      a.tokens.write,
      {
        reason: '',
        force: true,
      },
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      { path: 'body.reason', message: 'Too small: expected string to have >=1 characters' },
      { path: 'body.force', message: 'unknown field' },
    ]);
  });
});

describe('inbox', () => {
  async function seed() {
    const add = (user: string, title: string, createdAt: string) =>
      a.t.rt.repos.inbox.add({
        tenant: 'acme',
        user,
        kind: 'run-failed',
        title,
        body: `${title}: exit code 1`,
        project: 'ops',
        scheduler: 'job',
        correlationId: `run_${title}`,
        logPath: `_vance/logs/scheduler/job/${title}.md`,
        createdAt: Date.parse(createdAt),
      });
    const ids = {
      r1: await add('rita', 'r1', '2026-06-01T07:00:00Z'),
      r2: await add('rita', 'r2', '2026-06-01T07:01:00Z'),
      r3: await add('rita', 'r3', '2026-06-01T07:02:00Z'),
      w1: await add('wes', 'w1', '2026-06-01T07:03:00Z'),
      o1: await a.t.rt.repos.inbox.add({
        tenant: 'other',
        user: 'rita',
        kind: 'run-failed',
        title: 'o1',
        body: 'other tenant',
        createdAt: Date.parse('2026-06-01T07:04:00Z'),
      }),
    };
    return ids;
  }

  const item = (id: number, title: string, createdAt: string, readAt: string | null = null) => ({
    id,
    user: 'rita',
    kind: 'run-failed',
    title,
    body: `${title}: exit code 1`,
    project: 'ops',
    scheduler: 'job',
    correlationId: `run_${title}`,
    logPath: `_vance/logs/scheduler/job/${title}.md`,
    createdAt,
    readAt,
  });

  it("lists the token user's unread items newest first, paged; all=true adds the read ones", async () => {
    const ids = await seed();
    const res = await a.request('GET', '/brain/acme/inbox', a.tokens.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      items: [
        item(ids.r3, 'r3', '2026-06-01T07:02:00Z'),
        item(ids.r2, 'r2', '2026-06-01T07:01:00Z'),
        item(ids.r1, 'r1', '2026-06-01T07:00:00Z'),
      ],
      nextCursor: null,
    });
    const page1 = await a.request('GET', '/brain/acme/inbox?limit=2', a.tokens.read);
    expect(page1.json().items.map((i: { id: number }) => i.id)).toEqual([ids.r3, ids.r2]);
    expect(page1.json().nextCursor).toBe(ids.r2);
    const page2 = await a.request('GET', `/brain/acme/inbox?limit=2&before=${ids.r2}`, a.tokens.read);
    expect(page2.json()).toEqual({ items: [item(ids.r1, 'r1', '2026-06-01T07:00:00Z')], nextCursor: null });

    a.t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    await a.t.rt.repos.inbox.markRead('acme', 'rita', [ids.r2], a.t.clock.now());
    const unread = await a.request('GET', '/brain/acme/inbox', a.tokens.read);
    expect(unread.json().items.map((i: { id: number }) => i.id)).toEqual([ids.r3, ids.r1]);
    const all = await a.request('GET', '/brain/acme/inbox?all=true', a.tokens.read);
    expect(all.json().items).toEqual([
      item(ids.r3, 'r3', '2026-06-01T07:02:00Z'),
      item(ids.r2, 'r2', '2026-06-01T07:01:00Z', '2026-06-01T09:00:00Z'),
      item(ids.r1, 'r1', '2026-06-01T07:00:00Z'),
    ]);
  });

  it("reads another user's inbox only with admin (403 otherwise)", async () => {
    const ids = await seed();
    const byAdmin = await a.request('GET', '/brain/acme/inbox?user=rita', a.tokens.admin);
    expect(byAdmin.json().items.map((i: { id: number }) => i.id)).toEqual([ids.r3, ids.r2, ids.r1]);
    const own = await a.request('GET', '/brain/acme/inbox?user=rita', a.tokens.read);
    expect(own.statusCode).toBe(200);
    const byWriter = await a.request('GET', '/brain/acme/inbox?user=rita', a.tokens.write);
    expect(byWriter.statusCode).toBe(403);
    expect(byWriter.headers['content-type']).toBe(PROBLEM);
    expect(byWriter.json()).toEqual({
      type: 'https://ursa.dev/errors#forbidden',
      title: 'FORBIDDEN',
      status: 403,
      code: 'FORBIDDEN',
      detail:
        'user: reading or marking the inbox of another user (rita) needs the admin role; this token has write',
      errors: [
        {
          path: 'user',
          message:
            'user: reading or marking the inbox of another user (rita) needs the admin role; this token has write',
        },
      ],
    });
    const byOperator = await a.request('GET', '/brain/acme/inbox?user=wes', a.tokens.operator);
    expect(byOperator.json().items.map((i: { id: number }) => i.id)).toEqual([ids.w1]);
  });

  it('marks items read: only the user’s own, unread ones count', async () => {
    const ids = await seed();
    a.t.clock.set(Date.parse('2026-06-01T09:30:00Z'));
    const own = await a.request('POST', '/brain/acme/inbox/read', a.tokens.write, {
      ids: [ids.w1, ids.r1, ids.o1],
    });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toEqual({ marked: 1 });
    const again = await a.request('POST', '/brain/acme/inbox/read', a.tokens.write, { ids: [ids.w1] });
    expect(again.json()).toEqual({ marked: 0 });

    const forbidden = await a.request('POST', '/brain/acme/inbox/read', a.tokens.write, {
      ids: [ids.r1],
      user: 'rita',
    });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().code).toBe('FORBIDDEN');
    const byAdmin = await a.request('POST', '/brain/acme/inbox/read', a.tokens.admin, {
      ids: [ids.r1, ids.r2],
      user: 'rita',
    });
    expect(byAdmin.json()).toEqual({ marked: 2 });
    const left = await a.request('GET', '/brain/acme/inbox?user=rita&all=true', a.tokens.admin);
    expect(left.json().items.map((i: { readAt: string | null }) => i.readAt)).toEqual([
      null,
      '2026-06-01T09:30:00Z',
      '2026-06-01T09:30:00Z',
    ]);
    // The other tenant's item stays unread.
    expect(await a.t.rt.repos.inbox.unreadCount('other', 'rita')).toBe(1);
  });

  it('refuses bad bodies and queries with 400 and the field paths', async () => {
    const cases: [Method, string, unknown, { path: string; message: string }[]][] = [
      [
        'POST',
        '/brain/acme/inbox/read',
        { ids: [] },
        [{ path: 'body.ids', message: 'Too small: expected array to have >=1 items' }],
      ],
      [
        'POST',
        '/brain/acme/inbox/read',
        { ids: [1, 'two', 0], all: true },
        [
          { path: 'body.ids.1', message: 'Invalid input: expected number, received string' },
          { path: 'body.ids.2', message: 'Too small: expected number to be >=1' },
          { path: 'body.all', message: 'unknown field' },
        ],
      ],
      [
        'POST',
        '/brain/acme/inbox/read',
        {},
        [{ path: 'body.ids', message: 'Invalid input: expected array, received undefined' }],
      ],
      [
        'GET',
        '/brain/acme/inbox?all=yes&limit=0&user=a/b',
        undefined,
        [
          { path: 'querystring.user', message: 'a user name: letters, digits, ".", "_", "-", at most 128' },
          { path: 'querystring.all', message: 'Invalid option: expected one of "true"|"false"' },
          { path: 'querystring.limit', message: 'Too small: expected number to be >=1' },
        ],
      ],
    ];
    for (const [method, url, body, errors] of cases) {
      const res = await a.request(method, url, a.tokens.admin, body);
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors });
    }
  });
});

describe('POST /brain/{tenant}/scheduler/refresh (spec §8, tenant-wide)', () => {
  it('refreshes every active project of the tenant, sorted by project', async () => {
    await put('web', 'b', SCHEDULER_YAML);
    await put('web', 'a', SCHEDULER_YAML);
    await put('ops', 'job', SCHEDULER_YAML);
    await a.t.rt.repos.documents.put(
      { tenant: 'acme', project: 'ops', path: '_vance/scheduler/bad.yaml' },
      'description: broken\nrecipe: noop\n',
      libraryActor('wes'),
      a.t.clock.now(),
    );
    const res = await a.request('POST', '/brain/acme/scheduler/refresh', a.tokens.admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      projects: [
        {
          project: 'ops',
          active: true,
          registered: ['job'],
          invalid: [
            {
              path: '_vance/scheduler/bad.yaml',
              message: 'ops/_vance/scheduler/bad.yaml: exactly one of cron and at must be set; found neither',
            },
          ],
        },
        { project: 'web', active: true, registered: ['a', 'b'], invalid: [] },
      ],
    });
    // A tenant without projects has nothing to refresh; the operator reaches it.
    const empty = await a.request('POST', '/brain/other/scheduler/refresh', a.tokens.operator);
    expect(empty.json()).toEqual({ projects: [] });
  });

  it('is not shadowed by /brain/{tenant}/project/{project}/…: a project named "scheduler" keeps its own routes', async () => {
    await put('scheduler', 'refresh', SCHEDULER_YAML);
    const detail = await a.request('GET', '/brain/acme/project/scheduler/scheduler/refresh', a.tokens.read);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({ name: 'refresh', path: '_vance/scheduler/refresh.yaml' });
    const project = await a.request(
      'POST',
      '/brain/acme/project/scheduler/scheduler/refresh',
      a.tokens.admin,
    );
    expect(project.json()).toEqual({ active: true, registered: ['refresh'], invalid: [] });
    const tenant = await a.request('POST', '/brain/acme/scheduler/refresh', a.tokens.admin);
    expect(tenant.json()).toEqual({
      projects: [{ project: 'scheduler', active: true, registered: ['refresh'], invalid: [] }],
    });
  });
});
