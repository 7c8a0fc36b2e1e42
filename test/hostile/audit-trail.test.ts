import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { SCHEDULER_YAML, type TestApp, testApp } from '../support/http.js';

// Issue #19: every document version records who wrote it (user, token id or cli, interface),
// and so do deletes and restores; an agent's writes are marked as an agent's; fire, stop and
// refresh are attributed. Written through every interface: REST, MCP (an agent), the CLI.

const T = 'acme';
const P = 'ops';
const PROJECT = `/brain/${T}/project/${P}`;
const PATH = '_vance/scheduler/audited.yaml';
// The CLI's clock: every entry it writes is at this instant.
const CLI_NOW = '2026-06-01T09:00:00Z';

describe.each(DIALECTS)('the audit trail on %s (issue #19)', (dialect) => {
  let a: TestApp;
  let cwd: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    a = await testApp(dialect);
    cwd = mkdtempSync(join(tmpdir(), 'ursa-audit-'));
    for (const role of ['read', 'write', 'admin'] as const) {
      const checked = await a.t.rt.repos.tokens.check(a.tokens[role], a.t.clock.now());
      if (checked.state !== 'live') throw new Error(`the ${role} token is ${checked.state}`);
      ids[role] = checked.token.id;
    }
  });
  afterAll(async () => {
    await a.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const cli = (args: string[]) =>
    ursa([...args, '--db', a.t.location, '--tenant', T, '--project', P], { cwd, now: CLI_NOW });

  /** A tool call over MCP (HTTP), as an agent connected with `token` does it. */
  async function agentCall(token: string, name: string, args: object) {
    const res = await a.app.inject({
      method: 'POST',
      url: `/mcp?project=${P}`,
      headers: {
        ...a.auth(token),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    });
    expect(res.statusCode).toBe(200);
    const result = (
      res.json() as { result: { isError?: boolean; structuredContent: Record<string, unknown> } }
    ).result;
    expect(result.isError, JSON.stringify(result)).toBeUndefined();
    return result.structuredContent;
  }

  const at = '2026-06-01T08:00:00Z';
  const rest = (role: string, user: string) => ({
    user,
    tokenId: ids[role],
    interface: 'rest',
    agent: false,
  });
  const local = { user: 'admin', tokenId: null, interface: 'cli', agent: false };

  it('records who wrote each version, deleted and restored a document: REST, an agent over MCP, the CLI; GET …/history and ursa doc history show it newest first', async () => {
    expect(
      (await a.request('PUT', `${PROJECT}/scheduler/audited`, a.tokens.write, { yaml: SCHEDULER_YAML }))
        .statusCode,
    ).toBe(201);
    const v2 = SCHEDULER_YAML.replace('0 0 3', '0 0 4');
    expect(
      (await a.request('PUT', `${PROJECT}/scheduler/audited`, a.tokens.admin, { yaml: v2 })).statusCode,
    ).toBe(200);
    // An agent acting for wes, connected with wes's token.
    const v3 = SCHEDULER_YAML.replace('0 0 3', '0 0 5');
    expect(await agentCall(a.tokens.write, 'scheduler_set', { name: 'audited', yaml: v3 })).toMatchObject({
      version: 3,
    });
    // The CLI on the store, as its operator.
    const file = join(cwd, 'audited.yaml');
    writeFileSync(file, SCHEDULER_YAML.replace('0 0 3', '0 0 6'));
    expect((await cli(['set', 'audited', '-f', file])).code).toBe(0);
    const deleted = await a.request('DELETE', `${PROJECT}/scheduler/audited`, a.tokens.write);
    expect(deleted.statusCode).toBe(200);
    const { trashPath } = deleted.json() as { trashPath: string };
    const restore = await cli(['doc', 'restore', trashPath]);
    expect(restore.stdout).toBe(`${PATH}\n`);

    const entry = (
      n: number,
      version: number,
      action: string,
      by: object,
      when = at,
      trash: string | null = null,
    ) => ({
      id: expect.any(Number),
      version,
      at: when,
      action,
      path: PATH,
      trashPath: trash,
      ...by,
      _n: n,
    });
    const expected = [
      // A restore gets a version the path never had.
      entry(6, 5, 'restore', local, CLI_NOW, trashPath),
      entry(5, 4, 'delete', rest('write', 'wes'), at, trashPath),
      entry(4, 4, 'update', local, CLI_NOW),
      entry(3, 3, 'update', { user: 'wes', tokenId: ids.write, interface: 'mcp', agent: true }),
      entry(2, 2, 'update', rest('admin', 'ada')),
      entry(1, 1, 'create', rest('write', 'wes')),
    ].map(({ _n, ...e }) => e);

    const res = await a.request('GET', `${PROJECT}/documents/${PATH}/history`, a.tokens.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ path: PATH, history: expected, nextCursor: null });
    const history = (res.json() as { history: { id: number }[] }).history;
    expect(history.map((h) => h.id)).toEqual([...history.map((h) => h.id)].sort((x, y) => y - x));

    // Paged, and at the trash path: its delete and its restore.
    const page = await a.request('GET', `${PROJECT}/documents/${PATH}/history?limit=2`, a.tokens.read);
    expect(page.json()).toEqual({ path: PATH, history: expected.slice(0, 2), nextCursor: history[1]?.id });
    const trashed = await a.request('GET', `${PROJECT}/documents/${trashPath}/history`, a.tokens.read);
    expect((trashed.json() as { history: object[] }).history).toEqual(expected.slice(0, 2));

    const json = await cli(['doc', 'history', PATH, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(expected);
    const text = await cli(['doc', 'history', PATH, '-n', '3']);
    const token = (value: string) => value.padEnd(ids.write?.length ?? 0);
    expect(text.stdout).toBe(
      [
        `AT                    ACTION   VERSION  USER   ${token('TOKEN')}  INTERFACE  AGENT`,
        `${CLI_NOW}  restore        5  admin  ${token('cli')}  cli`,
        `${at}  delete         4  wes    ${ids.write}  rest`,
        `${CLI_NOW}  update         4  admin  ${token('cli')}  cli`,
        `next page: --before ${history[2]?.id}`,
        '',
      ].join('\n'),
    );
  });

  it('answers an empty history for a path nothing was written to, and 404 for another tenant', async () => {
    const res = await a.request(
      'GET',
      `${PROJECT}/documents/_vance/scheduler/never.yaml/history`,
      a.tokens.read,
    );
    expect(res.json()).toEqual({ path: '_vance/scheduler/never.yaml', history: [], nextCursor: null });
    const other = await a.request('GET', `${PROJECT}/documents/${PATH}/history`, a.tokens.other);
    expect(other.statusCode).toBe(404);
  });

  it('attributes fires, process and workflow-run stops and refreshes: REST with the token, an agent marked as one, the CLI', async () => {
    await a.request('PUT', `${PROJECT}/scheduler/firing`, a.tokens.write, { yaml: SCHEDULER_YAML });
    const rows = () =>
      a.t.store.db
        .selectFrom('audit_log')
        .select([
          'project',
          'subject_type',
          'subject',
          'action',
          'user_name',
          'token_id',
          'interface',
          'agent',
          'detail',
        ])
        .where('action', 'in', ['fire', 'stop', 'refresh'])
        .orderBy('id')
        .execute();
    const fired = (await a.request('POST', `${PROJECT}/scheduler/firing/fire`, a.tokens.write)).json() as {
      correlationId: string;
    };
    const byAgent = await agentCall(a.tokens.admin, 'scheduler_fire', { name: 'firing' });
    const cliFire = JSON.parse((await cli(['fire', 'firing', '--json'])).stdout) as { correlationId: string };
    expect((await a.request('POST', `${PROJECT}/scheduler/refresh`, a.tokens.admin)).statusCode).toBe(200);
    expect((await a.request('POST', `/brain/${T}/scheduler/refresh`, a.tokens.admin)).statusCode).toBe(200);
    await agentCall(a.tokens.admin, 'scheduler_refresh', {});
    expect((await cli(['refresh'])).code).toBe(0);

    // A process running now: its stop is attributed; a stop of an ended one does nothing and records nothing.
    await a.t.rt.repos.processes.create({
      id: 'proc_audit',
      tenant: T,
      project: P,
      sessionId: 'sess_audit',
      recipe: 'noop',
      engine: 'noop',
      status: 'running',
      ownerUser: 'wes',
      triggerOrigin: {
        source: 'ursascheduler:firing',
        scheduledFor: 0,
        correlationId: fired.correlationId,
        trigger: 'manual',
      },
      params: {},
      initialMessage: null,
      createdAt: a.t.clock.now(),
    });
    const stop = await a.request('POST', `${PROJECT}/processes/proc_audit/stop`, a.tokens.write, {
      reason: 'enough',
    });
    expect(stop.json()).toEqual({ stopping: true });
    expect((await a.request('POST', `${PROJECT}/processes/proc_audit/stop`, a.tokens.admin)).json()).toEqual({
      stopping: false,
    });

    // A workflow run running now: its stop is attributed to the caller too.
    await a.t.store.db
      .insertInto('workflow_runs')
      .values({
        id: 'abcd1234',
        tenant: T,
        project: P,
        workflow: 'flow',
        status: 'running',
        params: '{}',
        document: 'description: w\n',
        run_as: 'wes',
        session_id: 'sess_flow',
        correlation_id: null,
        worker_id: null,
        reason: null,
        created_at: a.t.clock.now(),
        ended_at: null,
        stop_requested_at: null,
      })
      .execute();
    const stopRun = await a.request('POST', `${PROJECT}/workflow-runs/abcd1234/stop`, a.tokens.admin);
    expect(stopRun.json()).toEqual({ stopping: true });

    const row = (
      project: string,
      type: string,
      subject: string,
      action: string,
      by: readonly unknown[],
      detail: object | null,
    ) => ({
      project,
      subject_type: type,
      subject,
      action,
      user_name: by[0],
      token_id: by[1],
      interface: by[2],
      agent: by[3],
      detail: detail === null ? null : JSON.stringify(detail),
    });
    const wes = ['wes', ids.write, 'rest', 0];
    const ada = ['ada', ids.admin, 'rest', 0];
    const agent = ['ada', ids.admin, 'mcp', 1];
    const operator = ['admin', null, 'cli', 0];
    expect(await rows()).toEqual([
      row(P, 'scheduler', 'firing', 'fire', wes, { correlationId: fired.correlationId }),
      row(P, 'scheduler', 'firing', 'fire', agent, { correlationId: byAgent.correlationId }),
      row(P, 'scheduler', 'firing', 'fire', operator, { correlationId: cliFire.correlationId }),
      row(P, 'project', '', 'refresh', ada, null),
      row('_tenant', 'project', '', 'refresh', ada, { allProjects: true }),
      row(P, 'project', '', 'refresh', agent, null),
      row(P, 'project', '', 'refresh', operator, null),
      row(P, 'process', 'proc_audit', 'stop', wes, { reason: 'enough' }),
      row(P, 'workflow-run', 'abcd1234', 'stop', ada, null),
    ]);
    // Each fire's row names its run.
    for (const id of [fired.correlationId, byAgent.correlationId, cliFire.correlationId])
      expect(await a.t.rt.repos.runs.get(id as string)).toMatchObject({ name: 'firing', trigger: 'manual' });
  });
});
