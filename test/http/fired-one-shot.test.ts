import { afterEach, describe, expect, it } from 'vitest';
import { describeScheduler } from '../../src/service/describe.js';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { injectFetch, ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { PROBLEM, type TestApp, testApp } from '../support/http.js';

// Issue #23 item 2: a one-shot that fired leaves the list (spec §10a: no "expired" entry) and its
// document goes to the trash; asked for by name it answers when it fired, which run it started and
// where its document is, and a listing with all shows it.

const BASE = '/brain/acme/project/ops/scheduler';
const AT = '2026-06-01T08:30:00Z';
const ONCE = `description: once\nat: "${AT}"\ntimezone: UTC\nrecipe: noop\n`;

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('a fired one-shot stays findable on %s (issue #23)', (dialect) => {
  /** The app after the one-shot `once` fired at its instant; its run's correlation id and trash path. */
  async function fired(): Promise<{ t: TestApp; correlationId: string; trashPath: string }> {
    const t = await testApp(dialect);
    a = t;
    expect((await t.request('PUT', `${BASE}/once`, t.tokens.write, { yaml: ONCE })).statusCode).toBe(201);
    const worker = t.t.worker({ acquireAheadMs: 0 });
    await worker.bootstrap();
    t.t.clock.set(Date.parse(AT));
    await worker.tick();
    await worker.executor.settled();
    const [run] = await t.t.rt.repos.runs.listForScheduler('acme', 'ops', 'once', 10);
    const trashed = await t.t.store.db
      .selectFrom('documents')
      .select('path')
      .where('trashed_from', '=', '_vance/scheduler/once.yaml')
      .executeTakeFirst();
    if (run === undefined || trashed === undefined) throw new Error('the one-shot did not fire');
    expect(run.outcome).toBe('completed');
    return { t, correlationId: run.correlationId, trashPath: trashed.path };
  }

  it('answers 410 ONE_SHOT_FIRED by name: when it fired, its run and where its document is', async () => {
    const { t, correlationId, trashPath } = await fired();
    const detail = `scheduler "once" was a one-shot: it fired at ${AT} (run ${correlationId}) and left the list; its document is in the trash at ${trashPath}; to run it again, write it anew with a later at:`;
    for (const path of ['once', 'once/describe', 'once/upcoming']) {
      const res = await t.request('GET', `${BASE}/${path}`, t.tokens.read);
      expect([res.statusCode, res.headers['content-type']]).toEqual([410, PROBLEM]);
      expect(res.json()).toMatchObject({ code: 'ONE_SHOT_FIRED', detail });
    }
    const fire = await t.request('POST', `${BASE}/once/fire`, t.tokens.write);
    expect([fire.statusCode, fire.json().code]).toEqual([410, 'ONE_SHOT_FIRED']);
    // A name that never was stays a plain 404; an agent's view says no more than not found.
    expect((await t.request('GET', `${BASE}/never`, t.tokens.read)).statusCode).toBe(404);
    await expect(
      describeScheduler(t.t.rt, 'acme', 'ops', 'once', 1, { visibleToAgents: true }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('tells an agent that a one-shot it may see fired; a hidden one stays not found (issue #23)', async () => {
    const { t } = await fired();
    const agent = { tenant: 'acme', project: 'ops', user: 'mia' };
    const said = {
      ok: false,
      error: {
        code: 'ONE_SHOT_FIRED',
        message: `scheduler "once" was a one-shot: it fired at ${AT} and left the list; to run it again, write it anew with scheduler_set and a later at:`,
      },
    };
    expect(await callTool(t.t.rt, agent, TOOLS, 'scheduler_get', { name: 'once' })).toEqual(said);
    expect(await callTool(t.t.rt, agent, TOOLS, 'scheduler_fire', { name: 'once' })).toEqual(said);
    // A hidden one-shot's fire is not revealed to agents (spec §10b).
    const hidden = `${ONCE.replace('once', 'secret').replace(AT, '2026-06-01T09:00:00Z')}lockMode: hidden\n`;
    expect((await t.request('PUT', `${BASE}/secret`, t.tokens.write, { yaml: hidden })).statusCode).toBe(201);
    const worker = t.t.worker({ acquireAheadMs: 0 });
    await worker.bootstrap();
    t.t.clock.set(Date.parse('2026-06-01T09:00:00Z'));
    await worker.tick();
    await worker.executor.settled();
    expect((await t.request('GET', `${BASE}/secret`, t.tokens.read)).statusCode).toBe(410);
    for (const tool of ['scheduler_get', 'scheduler_fire']) {
      expect(await callTool(t.t.rt, agent, TOOLS, tool, { name: 'secret' })).toMatchObject({
        ok: false,
        error: { code: 'NOT_FOUND' },
      });
    }
  });

  it('refuses to restore its document as it is (it would not run again), and changes nothing', async () => {
    const { t, correlationId, trashPath } = await fired();
    const res = await t.request('POST', '/brain/acme/project/ops/documents/restore', t.tokens.write, {
      path: trashPath,
    });
    expect([res.statusCode, res.json().code]).toEqual([410, 'ONE_SHOT_FIRED']);
    expect(res.json().detail).toBe(
      `${trashPath}: scheduler "once" is a one-shot that fired at ${AT} (run ${correlationId}); restored as it is it would not run again: write it anew with a later at:`,
    );
    const still = await t.t.store.db
      .selectFrom('documents')
      .select('path')
      .where('path', '=', trashPath)
      .execute();
    expect(still).toHaveLength(1);
    expect(
      await t.t.rt.repos.documents.get({
        tenant: 'acme',
        project: 'ops',
        path: '_vance/scheduler/once.yaml',
      }),
    ).toBe(undefined);
    // Written anew with a later at:, it is scheduled again.
    const later = ONCE.replace(AT, '2026-06-01T09:00:00Z');
    expect((await t.request('PUT', `${BASE}/once`, t.tokens.write, { yaml: later })).statusCode).toBe(201);
    expect((await t.request('GET', `${BASE}/once`, t.tokens.read)).statusCode).toBe(200);
  });

  it('lists it only with all=true, newest fire first, with its trash path', async () => {
    const { t, correlationId, trashPath } = await fired();
    const plain = (await t.request('GET', BASE, t.tokens.read)).json();
    expect([plain.schedulers, plain.fired]).toEqual([[], undefined]);
    const all = (await t.request('GET', `${BASE}?all=true`, t.tokens.read)).json();
    expect(all.fired).toEqual([{ name: 'once', at: AT, firedAt: AT, correlationId, trashPath }]);
    expect((await t.request('GET', `${BASE}?all=yes`, t.tokens.read)).statusCode).toBe(400);
  });

  it('ursa get says so and exits 2; ursa list --all shows it', async () => {
    const { t, correlationId, trashPath } = await fired();
    const fetch = injectFetch(t.app);
    const remote = [
      '--url',
      'http://ursa.test',
      '--token',
      t.tokens.read,
      '--tenant',
      'acme',
      '--project',
      'ops',
    ];
    const get = await ursa(['get', 'once', ...remote], { fetch });
    expect([get.code, get.stdout]).toEqual([2, '']);
    expect(get.stderr).toContain(`fired at ${AT} (run ${correlationId})`);
    expect((await ursa(['list', ...remote], { fetch })).stdout).toBe(
      'no schedulers in acme/ops\n1 one-shot fired and left the list: ursa list --all shows it\n',
    );
    expect(JSON.parse((await ursa(['list', '--json', ...remote], { fetch })).stdout)).toEqual({
      schedulers: [],
      invalid: [],
    });
    const list = await ursa(['list', '--all', ...remote], { fetch });
    expect(list.stdout).toBe(
      [
        'no schedulers in acme/ops',
        'fired one-shots (they left the list; write one anew with a later at: to run it again):',
        `  once: at ${AT}, fired ${AT}, run ${correlationId}, in the trash at ${trashPath}`,
        '',
      ].join('\n'),
    );
  });
});
