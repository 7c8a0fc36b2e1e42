import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, toolsFor } from '../../src/tools/toolset.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { snapshot } from '../support/snapshot.js';

// decisions §6: "runAs: only an admin may name another user than the caller; agent tools may only
// name the calling user. An unknown user is a validation error." Spec §2: without runAs a scheduler
// runs as its document's creator — so a non-admin who replaces another user's scheduler and leaves
// runAs out would make it run as that user, and is refused the same way. Every refusal changes nothing.

const URL = '/brain/acme/project/ops/scheduler';
const YAML = 'description: nightly job\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';
const PROBLEM = 'application/problem+json; charset=utf-8';

describe.each(DIALECTS)('runAs on %s (decisions §6)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
    await a.t.rt.repos.users.ensure('acme', 'ursula', a.t.clock.now());
    // A scheduler the admin ada created, with no runAs: it runs as ada.
    expect((await put('ada-job', YAML, a.tokens.admin)).statusCode).toBe(201);
    // One the writer wes created himself.
    expect((await put('wes-job', YAML, a.tokens.write)).statusCode).toBe(201);
  });
  afterAll(async () => {
    await a.close();
  });

  function put(name: string, yaml: string, token: string) {
    return a.app.inject({
      method: 'PUT',
      url: `${URL}/${name}`,
      headers: { ...a.auth(token), 'content-type': 'application/yaml' },
      payload: yaml,
    });
  }

  it('refuses a write token naming another user as runAs (403 at runAs), for a new and an existing scheduler', async () => {
    const before = await snapshot(a.t.store);
    // An existing user, an unknown one, and the admin herself: all are "another user" for wes.
    for (const other of ['ursula', 'nobody', 'ada']) {
      for (const name of ['fresh', 'wes-job', 'ada-job']) {
        const res = await put(name, `${YAML}runAs: ${other}\n`, a.tokens.write);
        expect(res.statusCode, `${name} runAs ${other}`).toBe(403);
        expect(res.headers['content-type']).toBe(PROBLEM);
        expect(res.json()).toEqual({
          type: 'https://ursa.dev/errors#forbidden',
          title: 'FORBIDDEN',
          status: 403,
          code: 'FORBIDDEN',
          detail: `ops/_vance/scheduler/${name}.yaml: runAs: only an admin may name another user than the caller (wes)`,
          errors: [{ path: 'runAs', message: 'only an admin may name another user than the caller (wes)' }],
        });
      }
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses a write token replacing a scheduler another user created without naming runAs: it would run as the creator', async () => {
    const before = await snapshot(a.t.store);
    const res = await put('ada-job', YAML.replace('0 0 3', '0 0 4'), a.tokens.write);
    expect(res.statusCode).toBe(403);
    const reason =
      'is missing, so the scheduler would keep running as ada, who created it; only an admin may make it run as another user than the caller (wes): write runAs: wes';
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#forbidden',
      title: 'FORBIDDEN',
      status: 403,
      code: 'FORBIDDEN',
      detail: `ops/_vance/scheduler/ada-job.yaml: runAs: ${reason}`,
      errors: [{ path: 'runAs', message: reason }],
      allowed: 'wes',
    });
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('lets a write token name itself, or leave runAs out of its own scheduler', async () => {
    expect((await put('wes-job', YAML.replace('0 0 3', '0 0 5'), a.tokens.write)).statusCode).toBe(200);
    expect((await put('wes-self', `${YAML}runAs: wes\n`, a.tokens.write)).statusCode).toBe(201);
    // Taking over ada's scheduler as himself is his to do: it then runs as wes, not as ada.
    expect((await put('ada-job', `${YAML}runAs: wes\n`, a.tokens.write)).statusCode).toBe(200);
  });

  it('lets an admin name another existing user; an unknown user is a validation error (400 USER_NOT_FOUND)', async () => {
    expect((await put('for-ursula', `${YAML}runAs: ursula\n`, a.tokens.admin)).statusCode).toBe(201);
    const before = await snapshot(a.t.store);
    const res = await put('for-nobody', `${YAML}runAs: nobody\n`, a.tokens.admin);
    expect(res.statusCode).toBe(400);
    const reason = 'no user "nobody" in tenant acme (add one with apply --as, or name an existing user)';
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#user_not_found',
      title: 'USER_NOT_FOUND',
      status: 400,
      code: 'USER_NOT_FOUND',
      detail: `ops/_vance/scheduler/for-nobody.yaml: runAs: ${reason}`,
      errors: [{ path: 'runAs', message: reason }],
    });
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses an agent naming another user, even with the admin toolset, and leaving runAs to another creator', async () => {
    const before = await snapshot(a.t.store);
    const agent = { tenant: 'acme', project: 'ops', user: 'mia' };
    for (const admin of [false, true]) {
      const named = await callTool(a.t.rt, agent, toolsFor(admin), 'scheduler_set', {
        name: 'agent-job',
        yaml: `${YAML}runAs: ursula\n`,
      });
      expect(named).toEqual({
        ok: false,
        error: {
          code: 'FORBIDDEN',
          message: 'runAs: an agent may only run schedulers as its own user (mia); leave runAs out',
          issues: [{ path: 'runAs', message: 'may only be mia, or left out' }],
        },
      });
      const implicit = await callTool(a.t.rt, agent, toolsFor(admin), 'scheduler_set', {
        name: 'wes-job',
        yaml: YAML,
      });
      expect(implicit).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN', issues: [{ path: 'runAs' }] },
      });
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses runAs over MCP with an admin token: agents act as the token user only', async () => {
    const before = await snapshot(a.t.store);
    const res = await a.app.inject({
      method: 'POST',
      url: '/mcp?project=ops',
      headers: {
        ...a.auth(a.tokens.admin),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'scheduler_set', arguments: { name: 'mcp-job', yaml: `${YAML}runAs: ursula\n` } },
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: 1,
      result: {
        isError: true,
        content: [
          {
            type: 'text',
            text: 'FORBIDDEN: runAs: an agent may only run schedulers as its own user (ada); leave runAs out',
          },
        ],
      },
    });
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('gives a workflow start no runAs to choose: an unknown body field is refused (400 at body.runAs)', async () => {
    const before = await snapshot(a.t.store);
    const res = await a.app.inject({
      method: 'POST',
      url: '/brain/acme/project/ops/workflows/any/runs',
      headers: a.auth(a.tokens.write),
      payload: { params: {}, runAs: 'ursula' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'body.runAs', message: 'unknown field' }],
    });
    expect(await snapshot(a.t.store)).toEqual(before);
  });
});
