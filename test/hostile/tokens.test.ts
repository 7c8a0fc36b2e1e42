import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/tokens.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';

// decisions §6: "REST and MCP over HTTP need a bearer token … tokens are stored hashed." What a
// stolen copy of the tokens table gives an attacker: no secret, and a hash that is no credential.
// Roles and the 401/403/404 matrix over every REST endpoint: test/http/auth.test.ts; here, the
// roles over MCP.

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
      'document_read',
      'document_list',
    ]);
    expect(await names(a.tokens.write)).toEqual([
      'scheduler_list',
      'scheduler_get',
      'scheduler_set',
      'scheduler_delete',
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
});
