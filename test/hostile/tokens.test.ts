import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/tokens.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';

// decisions §6: "REST and MCP over HTTP need a bearer token … tokens are stored hashed." What a
// stolen copy of the tokens table gives an attacker: no secret, and a hash that is no credential.
// Roles and the 401/403/404 matrix over every REST endpoint: test/http/auth.test.ts; here, the
// roles over MCP, and (issue #19) rotation and revocation holding from the very next request, on a
// kept-alive connection and over MCP too. Scope, expiry and last use: test/hostile/token-scope.test.ts.

const UNKNOWN = {
  type: 'https://ursa.dev/errors#unauthenticated',
  title: 'UNAUTHENTICATED',
  status: 401,
  code: 'UNAUTHENTICATED',
  detail: 'the bearer token is unknown or revoked',
};

describe.each(DIALECTS)('bearer tokens on %s (decisions §6)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
  });
  afterAll(async () => {
    await a.close();
  });

  it('keeps only the SHA-256 of each secret: no column of the tokens table holds a secret', async () => {
    const rows = await a.t.store.db.selectFrom('tokens').selectAll().execute();
    const dump = JSON.stringify(rows);
    for (const secret of Object.values(a.tokens)) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice('ursa_'.length));
      expect(rows.map((r) => r.hash)).toContain(hashToken(secret));
    }
  });

  it('refuses the stored hash, a secret with its case changed or cut short, and /mcp without a token (401)', async () => {
    const secret = a.tokens.admin;
    const variants = [
      hashToken(secret),
      `ursa_${hashToken(secret)}`,
      secret.toUpperCase(),
      secret.slice(0, -1),
      `${secret}x`,
    ];
    for (const token of variants) {
      const res = await a.app.inject({
        method: 'GET',
        url: '/brain/acme/project/ops/scheduler',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode, token).toBe(401);
      expect(res.json()).toEqual(UNKNOWN);
    }
    const mcp = await a.app.inject({
      method: 'POST',
      url: '/mcp?project=ops',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.statusCode).toBe(401);
    expect(mcp.json()).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('gives a read token over MCP only the read-only tools: it cannot write a scheduler there either', async () => {
    const rpc = async (token: string, id: number, method: string, params?: object) => {
      const res = await a.app.inject({
        method: 'POST',
        url: '/mcp?project=ops',
        headers: {
          ...a.auth(token),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        payload: { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) },
      });
      expect(res.statusCode).toBe(200);
      return res.json() as { result: { tools?: { name: string }[]; isError?: boolean } };
    };
    const names = async (token: string) =>
      (await rpc(token, 1, 'tools/list')).result.tools?.map((t) => t.name);
    expect(await names(a.tokens.read)).toEqual([
      'scheduler_list',
      'scheduler_get',
      'recipe_list',
      'recipe_get',
      'document_read',
      'document_list',
    ]);
    expect(await names(a.tokens.write)).toEqual([
      'scheduler_list',
      'scheduler_get',
      'scheduler_set',
      'scheduler_delete',
      'scheduler_pause',
      'scheduler_resume',
      'recipe_list',
      'recipe_get',
      'document_read',
      'document_list',
    ]);
    expect(await names(a.tokens.admin)).toContain('scheduler_fire');
    const yaml = 'description: d\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';
    const set = await rpc(a.tokens.read, 2, 'tools/call', {
      name: 'scheduler_set',
      arguments: { name: 'x', yaml },
    });
    expect(set.result.isError).toBe(true);
    expect(await a.t.rt.repos.documents.list('acme', 'ops', '')).toEqual([]);
  });

  const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

  /** One request over `agent` to the listening app: its status, body, and whether it reused a connection. */
  function over(
    agent: Agent,
    base: string,
    path: string,
    token: string,
    body?: object,
  ): Promise<{ status: number; body: string; reused: boolean }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `${base}${path}`,
        {
          agent,
          method: body === undefined ? 'GET' : 'POST',
          headers: { ...a.auth(token), ...(body === undefined ? {} : MCP) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, reused: req.reusedSocket }));
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  it('refuses a revoked token on its very next request: over a kept-alive connection, over MCP, with nothing cached (issue #19)', async () => {
    await a.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(a.app.server.address() as AddressInfo).port}`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const now = a.t.clock.now();
      const rest = await a.t.rt.repos.tokens.create({ tenant: 'acme', role: 'read', user: 'rita' }, now);
      const mcp = await a.t.rt.repos.tokens.create({ tenant: 'acme', role: 'write', user: 'wes' }, now);
      const first = await over(agent, base, '/brain/acme/project/ops/scheduler', rest.secret);
      expect(first.status).toBe(200);
      expect((await over(agent, base, '/mcp?project=ops', mcp.secret, TOOLS_LIST)).status).toBe(200);
      expect(await a.t.rt.repos.tokens.revoke(rest.token.id, now)).toBe(true);
      expect(await a.t.rt.repos.tokens.revoke(mcp.token.id, now)).toBe(true);
      const next = await over(agent, base, '/brain/acme/project/ops/scheduler', rest.secret);
      expect([next.status, next.reused, JSON.parse(next.body)]).toEqual([401, true, UNKNOWN]);
      const tools = await over(agent, base, '/mcp?project=ops', mcp.secret, TOOLS_LIST);
      expect([tools.status, tools.reused, JSON.parse(tools.body)]).toEqual([401, true, UNKNOWN]);
    } finally {
      agent.destroy();
    }
  });

  it('rotates a secret: the old one is refused on the next request, the new one keeps id, role and scope (issue #19)', async () => {
    const now = a.t.clock.now();
    const { token, secret: old } = await a.t.rt.repos.tokens.create(
      { tenant: 'acme', project: 'ops', role: 'write', user: 'wes', label: 'ci' },
      now,
    );
    const get = (secret: string, project = 'ops') =>
      a.request('GET', `/brain/acme/project/${project}/scheduler`, secret);
    expect((await get(old)).statusCode).toBe(200);
    const rotated = await a.t.rt.repos.tokens.rotate(token.id, now);
    expect(rotated?.token).toEqual({ ...token, lastUsedAt: now });
    const fresh = rotated?.secret as string;
    expect(fresh).toMatch(/^ursa_[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(old);
    const refused = await get(old);
    expect([refused.statusCode, refused.json()]).toEqual([401, UNKNOWN]);
    expect((await get(fresh)).statusCode).toBe(200);
    // Same scope: another project is a missing resource; same role over MCP.
    expect((await get(fresh, 'dev')).statusCode).toBe(404);
    const rows = await a.t.store.db.selectFrom('tokens').selectAll().where('id', '=', token.id).execute();
    expect(rows.map((r) => [r.hash, r.previous_hash])).toEqual([[hashToken(fresh), null]]);
  });

  it('rotates with a grace: the old secret works until the grace ends, a second rotation or a revocation ends it at once (issue #19)', async () => {
    const now = a.t.clock.now();
    const { token, secret: first } = await a.t.rt.repos.tokens.create(
      { tenant: 'acme', role: 'read', user: 'rita' },
      now,
    );
    const status = async (secret: string) =>
      (await a.request('GET', '/brain/acme/project/ops/scheduler', secret)).statusCode;
    try {
      const second = (await a.t.rt.repos.tokens.rotate(token.id, now, 300_000))?.secret as string;
      a.t.clock.set(now + 299_999);
      expect([await status(first), await status(second)]).toEqual([200, 200]);
      a.t.clock.set(now + 300_000);
      expect([await status(first), await status(second)]).toEqual([401, 200]);
      // A second rotation in a grace: the secret before the first one is gone at once.
      a.t.clock.set(now);
      const third = (await a.t.rt.repos.tokens.rotate(token.id, now, 300_000))?.secret as string;
      const fourth = (await a.t.rt.repos.tokens.rotate(token.id, now, 300_000))?.secret as string;
      expect([await status(first), await status(second), await status(third), await status(fourth)]).toEqual([
        401, 401, 200, 200,
      ]);
      expect(await a.t.rt.repos.tokens.revoke(token.id, now)).toBe(true);
      expect([await status(third), await status(fourth)]).toEqual([401, 401]);
      // A revoked or expired token is not rotated: no new secret is issued.
      expect(await a.t.rt.repos.tokens.rotate(token.id, now)).toBeUndefined();
      const expiring = await a.t.rt.repos.tokens.create(
        { tenant: 'acme', role: 'read', user: 'rita', expiresAt: now + 1 },
        now,
      );
      expect(await a.t.rt.repos.tokens.rotate(expiring.token.id, now + 1)).toBeUndefined();
      expect(await a.t.rt.repos.tokens.rotate('tok_nope', now)).toBeUndefined();
    } finally {
      a.t.clock.set(now);
    }
  });
});
