import { afterEach, describe, expect, it } from 'vitest';
import { FIRE_AS_WRITTEN } from '../../src/contract/index.js';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { ursa } from '../support/cli.js';
import { DIALECTS } from '../support/dialects.js';
import { PROBLEM, SCHEDULER_YAML, type TestApp, testApp } from '../support/http.js';

// issue #23 item 7 (spec §11): a fire runs the scheduler as written. Params or any other override
// in a fire were dropped silently; now they are refused with the reason, and nothing runs.

const BASE = '/brain/acme/project/ops/scheduler';

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

const runCount = async (t: TestApp) =>
  (await t.t.store.db.selectFrom('runs').select('correlation_id').execute()).length;

describe.each(DIALECTS)('a fire with overrides on %s', (dialect) => {
  async function app(): Promise<TestApp> {
    a = await testApp(dialect);
    expect((await a.request('PUT', `${BASE}/job`, a.tokens.write, { yaml: SCHEDULER_YAML })).statusCode).toBe(
      201,
    );
    return a;
  }

  it('REST: a body with params is refused with the reason (400), and no run starts', async () => {
    const t = await app();
    const res = await t.request('POST', `${BASE}/job/fire`, t.tokens.write, { params: { day: 'monday' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'body.params', message: FIRE_AS_WRITTEN }],
    });
    expect(await runCount(t)).toBe(0);
  });

  it('REST: no body or an empty one fires as before', async () => {
    const t = await app();
    expect((await t.request('POST', `${BASE}/job/fire`, t.tokens.write)).statusCode).toBe(202);
    expect((await t.request('POST', `${BASE}/job/fire`, t.tokens.write, {})).statusCode).toBe(202);
  });

  // Issue #23 (a newcomer's finding): the answer to a fire said nothing of where to see what became of it.
  it('REST: a fire answers 202 with the run in Location, which shows the run requested', async () => {
    const t = await app();
    const res = await t.request('POST', `${BASE}/job/fire`, t.tokens.write);
    const { correlationId } = res.json();
    expect([res.statusCode, res.headers.location]).toEqual([
      202,
      `/brain/acme/project/ops/runs/${correlationId}`,
    ]);
    const run = await t.request('GET', res.headers.location as string, t.tokens.read);
    expect([run.statusCode, run.json().correlationId, run.json().state]).toEqual([
      200,
      correlationId,
      'queued',
    ]);
  });

  it('scheduler_fire: params are refused with the reason, and no run starts', async () => {
    const t = await app();
    const agent = { tenant: 'acme', project: 'ops', user: 'mia' };
    const result = await callTool(t.t.rt, agent, TOOLS, 'scheduler_fire', { name: 'job', params: { a: 1 } });
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'ARGUMENT_INVALID', issues: [{ path: 'params', message: FIRE_AS_WRITTEN }] },
    });
    expect(await runCount(t)).toBe(0);
  });
});

describe('ursa fire --param', () => {
  it('is refused with the reason before any store is opened', async () => {
    const run = await ursa(['fire', 'job', '--param', 'day=monday', '--db', '/nonexistent/dir/ursa.db']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`ursa: --param: ${FIRE_AS_WRITTEN} [ARGUMENT_INVALID]\n`);
  });
});
