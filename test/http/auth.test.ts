import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/store/tokens.js';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, PROBLEM, SCHEDULER_YAML, type TestApp, testApp } from '../support/http.js';

// Decisions §6 over every tenant-scoped endpoint, on SQLite and PostgreSQL: 401 without a usable
// token, 403 for a role too low, 404 — the very body of a missing resource — for a token of another
// tenant, and the operator token (tenant null) reaching every tenant.

const UNAUTHENTICATED = {
  type: 'https://ursa.dev/errors#unauthenticated',
  title: 'UNAUTHENTICATED',
  status: 401,
  code: 'UNAUTHENTICATED',
  detail: 'a bearer token is required: Authorization: Bearer <token>',
};

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** One endpoint on tenant acme's resources: the role it needs, its success status, and a missing twin. */
interface Endpoint {
  readonly method: Method;
  readonly url: string;
  readonly payload?: unknown;
  readonly role: Role;
  /** The status the operator token gets. */
  readonly ok: number;
  /** The same request on a resource that does not exist in acme. */
  readonly missing?: string;
}

/** What the seed left in acme/ops. */
interface Seeded {
  readonly correlationId: string;
  readonly processId: string;
  readonly logPath: string;
  readonly revoked: string;
  readonly otherRead: string;
}

async function seed(a: TestApp): Promise<Seeded> {
  const put = await a.app.inject({
    method: 'PUT',
    url: '/brain/acme/project/ops/scheduler/job',
    headers: a.auth(a.tokens.write),
    payload: { yaml: SCHEDULER_YAML },
  });
  expect(put.statusCode).toBe(201);
  const worker = a.t.worker();
  await worker.bootstrap();
  const fire = await a.app.inject({
    method: 'POST',
    url: '/brain/acme/project/ops/scheduler/job/fire',
    headers: a.auth(a.tokens.write),
  });
  const { correlationId, logPath } = fire.json() as { correlationId: string; logPath: string };
  await worker.reap();
  await worker.executor.settled();
  const run = await a.t.rt.repos.runs.get(correlationId);
  expect(run?.outcome).toBe('completed');
  await a.t.rt.repos.inbox.add({
    tenant: 'acme',
    user: 'ada',
    kind: 'run-failed',
    title: 'a failed run',
    body: 'exit code 1',
    createdAt: a.t.clock.now(),
  });
  const now = a.t.clock.now();
  const revoked = await a.t.rt.repos.tokens.create({ tenant: 'acme', role: 'admin', user: 'ada' }, now);
  expect(await a.t.rt.repos.tokens.revoke(revoked.token.id, now)).toBe(true);
  const otherRead = await a.t.rt.repos.tokens.create({ tenant: 'other', role: 'read', user: 'otto' }, now);
  return {
    correlationId,
    processId: run?.processId as string,
    logPath,
    revoked: revoked.secret,
    otherRead: otherRead.secret,
  };
}

/** Every tenant-scoped endpoint, in an order the operator can call them (DELETE last). */
function endpoints(s: Seeded): Endpoint[] {
  const p = '/brain/acme/project/ops';
  return [
    { method: 'GET', url: `${p}/scheduler`, role: 'read', ok: 200 },
    { method: 'GET', url: `${p}/scheduler/job`, role: 'read', ok: 200, missing: `${p}/scheduler/nope` },
    { method: 'PUT', url: `${p}/scheduler/job`, payload: { yaml: SCHEDULER_YAML }, role: 'write', ok: 200 },
    { method: 'POST', url: `${p}/scheduler/refresh`, role: 'admin', ok: 200 },
    {
      method: 'POST',
      url: `${p}/scheduler/job/fire`,
      role: 'write',
      ok: 202,
      missing: `${p}/scheduler/nope/fire`,
    },
    {
      method: 'GET',
      url: `${p}/scheduler/job/describe`,
      role: 'read',
      ok: 200,
      missing: `${p}/scheduler/nope/describe`,
    },
    {
      method: 'GET',
      url: `${p}/scheduler/job/upcoming`,
      role: 'read',
      ok: 200,
      missing: `${p}/scheduler/nope/upcoming`,
    },
    { method: 'GET', url: `${p}/scheduler/job/events`, role: 'read', ok: 200 },
    { method: 'GET', url: `${p}/scheduler/job/runs`, role: 'read', ok: 200 },
    {
      method: 'GET',
      url: `${p}/runs/${s.correlationId}`,
      role: 'read',
      ok: 200,
      missing: `${p}/runs/run_nope`,
    },
    { method: 'GET', url: `${p}/documents?prefix=_vance/`, role: 'read', ok: 200 },
    {
      method: 'GET',
      url: `${p}/documents/${s.logPath}`,
      role: 'read',
      ok: 200,
      missing: `${p}/documents/nope.md`,
    },
    {
      method: 'GET',
      url: `${p}/processes/${s.processId}`,
      role: 'read',
      ok: 200,
      missing: `${p}/processes/proc_nope`,
    },
    {
      method: 'POST',
      url: `${p}/processes/${s.processId}/stop`,
      payload: { reason: 'matrix' },
      role: 'write',
      ok: 200,
      missing: `${p}/processes/proc_nope/stop`,
    },
    { method: 'GET', url: '/brain/acme/inbox', role: 'read', ok: 200 },
    { method: 'POST', url: '/brain/acme/inbox/read', payload: { ids: [1] }, role: 'write', ok: 200 },
    { method: 'POST', url: '/brain/acme/scheduler/refresh', role: 'admin', ok: 200 },
    { method: 'DELETE', url: `${p}/scheduler/job`, role: 'write', ok: 200, missing: `${p}/scheduler/nope` },
  ];
}

const RANK: Record<Role, number> = { read: 0, write: 1, admin: 2 };

describe.each(DIALECTS)('tokens and tenants on %s (decisions §6)', (dialect) => {
  let a: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    a = await testApp(dialect);
    s = await seed(a);
  });
  afterAll(async () => {
    await a.close();
  });

  function call(e: Pick<Endpoint, 'method' | 'url' | 'payload'>, headers: Record<string, string>) {
    return a.app.inject({
      method: e.method,
      url: e.url,
      headers,
      ...(e.payload === undefined ? {} : { payload: e.payload as object }),
    });
  }

  it('401 problem without a token, with a garbage, a revoked or a non-bearer token', async () => {
    const variants: Record<string, Record<string, string>> = {
      none: {},
      garbage: { authorization: 'Bearer ursa_garbage' },
      revoked: { authorization: `Bearer ${s.revoked}` },
      basic: { authorization: 'Basic YWRhOnNlY3JldA==' },
    };
    for (const e of endpoints(s)) {
      for (const [variant, headers] of Object.entries(variants)) {
        const res = await call(e, headers);
        expect(res.statusCode, `${e.method} ${e.url} (${variant})`).toBe(401);
        expect(res.headers['content-type']).toBe(PROBLEM);
        // A Basic header is no bearer token at all; a garbage or revoked one is named as such.
        const sent = variant === 'garbage' || variant === 'revoked';
        expect(res.json()).toEqual(
          sent ? { ...UNAUTHENTICATED, detail: 'the bearer token is unknown or revoked' } : UNAUTHENTICATED,
        );
      }
    }
  });

  it('403 problem for every role below what an endpoint needs', async () => {
    let checked = 0;
    for (const e of endpoints(s)) {
      for (const role of ['read', 'write'] as const) {
        if (RANK[role] >= RANK[e.role]) continue;
        const res = await call(e, a.auth(a.tokens[role]));
        expect(res.statusCode, `${e.method} ${e.url} as ${role}`).toBe(403);
        expect(res.headers['content-type']).toBe(PROBLEM);
        expect(res.json()).toEqual({
          type: 'https://ursa.dev/errors#forbidden',
          title: 'FORBIDDEN',
          status: 403,
          code: 'FORBIDDEN',
          detail: `this needs a token with the role ${e.role} or higher; this token has ${role}`,
        });
        checked++;
      }
    }
    // read on the 7 that change something (PUT, DELETE, fire, stop, inbox read, both refreshes);
    // write on the 2 refreshes.
    expect(checked).toBe(9);
  });

  it("404 matrix: another tenant's tokens get, on every endpoint, the body of a missing resource", async () => {
    const before = {
      doc: await a.t.rt.repos.documents.get({
        tenant: 'acme',
        project: 'ops',
        path: '_vance/scheduler/job.yaml',
      }),
      runs: (await a.t.rt.repos.runs.listForScheduler('acme', 'ops', 'job', 10)).length,
      unread: await a.t.rt.repos.inbox.unreadCount('acme', 'ada'),
    };
    for (const e of endpoints(s)) {
      for (const [who, token] of [
        ['other admin', a.tokens.other],
        ['other read', s.otherRead],
      ] as const) {
        const res = await call(e, a.auth(token));
        expect(res.statusCode, `${e.method} ${e.url} as ${who}`).toBe(404);
        expect(res.headers['content-type']).toBe(PROBLEM);
        expect(res.json()).toEqual(NOT_FOUND);
      }
    }
    // Nothing of acme changed: the scheduler, its runs, the stop and the inbox are as they were.
    expect(
      await a.t.rt.repos.documents.get({ tenant: 'acme', project: 'ops', path: '_vance/scheduler/job.yaml' }),
    ).toEqual(before.doc);
    expect((await a.t.rt.repos.runs.listForScheduler('acme', 'ops', 'job', 10)).length).toBe(before.runs);
    expect(await a.t.rt.repos.inbox.unreadCount('acme', 'ada')).toBe(before.unread);
    expect(await a.t.rt.repos.processes.stopRequested([s.processId])).toEqual([]);
  });

  it('a truly missing resource answers exactly the same 404 body, for its own tenant and for another', async () => {
    let checked = 0;
    for (const e of endpoints(s)) {
      if (e.missing === undefined) continue;
      const own = await call({ ...e, url: e.missing }, a.auth(a.tokens.admin));
      expect(own.statusCode, `${e.method} ${e.missing}`).toBe(404);
      expect(own.headers['content-type']).toBe(PROBLEM);
      expect(own.json()).toEqual(NOT_FOUND);
      // The other tenant's admin on its own tenant's missing twin sees the same as on acme's existing one.
      const mine = await call(
        { ...e, url: e.missing.replace('/brain/acme/', '/brain/other/') },
        a.auth(a.tokens.other),
      );
      expect(mine.statusCode).toBe(404);
      expect(mine.json()).toEqual((await call(e, a.auth(a.tokens.other))).json());
      checked++;
    }
    expect(checked).toBe(9);
  });

  it('the operator token (tenant null) reaches every endpoint of every tenant', async () => {
    const auth = a.auth(a.tokens.operator);
    for (const e of endpoints(s)) {
      const res = await call(e, auth);
      expect(res.statusCode, `${e.method} ${e.url}: ${res.body}`).toBe(e.ok);
    }
    const otherTenant = await call({ method: 'GET', url: '/brain/other/project/ops/scheduler' }, auth);
    expect(otherTenant.statusCode).toBe(200);
    expect(otherTenant.json()).toEqual({ schedulers: [], invalid: [] });
    const inbox = await call({ method: 'GET', url: '/brain/other/inbox' }, auth);
    expect(inbox.json()).toEqual({ items: [], nextCursor: null });
  });
});
