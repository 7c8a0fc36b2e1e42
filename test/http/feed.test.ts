import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedLine } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, PROBLEM, type TestApp, testApp } from '../support/http.js';

// Issue #23 item 7: the project feed, `GET …/feed`: the lines of every scheduler of a project,
// newest first, narrowed by scheduler, kind, run and time range, paged by cursor.

const P = '/brain/acme/project/ops';
const at = (minute: number) => Date.parse('2026-06-01T08:00:00Z') + minute * 60_000;

function line(
  project: string,
  scheduler: string,
  kind: FeedLine['kind'],
  trace: string,
  minute: number,
  tenant = 'acme',
): Omit<FeedLine, 'id'> {
  return {
    tenant,
    project,
    at: at(minute),
    kind,
    refType: 'SCHEDULER',
    refId: scheduler,
    traceId: trace,
    outcome: kind === 'START' ? 'pending' : kind === 'END' ? 'completed' : 'skipped_overlap',
    logPath: null,
    payload: {},
  };
}

describe.each(DIALECTS)('the project feed on %s (issue #23)', (dialect) => {
  let a: TestApp;
  const get = async (query: string, token = a.tokens.read) => a.request('GET', `${P}/feed${query}`, token);
  /** The page's lines as `scheduler kind trace`. */
  const lines = async (query: string) =>
    ((await get(query)).json() as { events: { refId: string; kind: string; traceId: string }[] }).events.map(
      (e) => `${e.refId} ${e.kind} ${e.traceId}`,
    );

  beforeAll(async () => {
    a = await testApp(dialect);
    const { feed } = a.t.rt.repos;
    for (const l of [
      line('ops', 'a', 'START', 'run_a1', 0),
      line('ops', 'b', 'SKIPPED', 'run_b1', 1),
      line('ops', 'a', 'END', 'run_a1', 2),
      line('dev', 'a', 'START', 'run_dev', 3),
      line('ops', 'a', 'START', 'run_a2', 4, 'other'),
      line('ops', 'b', 'START', 'run_b2', 5),
      line('ops', 'b', 'END', 'run_b2', 6),
    ])
      await feed.append(l);
  });
  afterAll(async () => {
    await a.close();
  });

  it("lists every scheduler's lines of the project, newest first, and nothing of another project or tenant", async () => {
    expect(await lines('')).toEqual([
      'b END run_b2',
      'b START run_b2',
      'a END run_a1',
      'b SKIPPED run_b1',
      'a START run_a1',
    ]);
    expect((await get('')).json().nextCursor).toBeNull();
  });

  it('narrows by scheduler, kind, run and a half-open time range', async () => {
    expect(await lines('?scheduler=a')).toEqual(['a END run_a1', 'a START run_a1']);
    expect(await lines('?kind=END,SKIPPED')).toEqual(['b END run_b2', 'a END run_a1', 'b SKIPPED run_b1']);
    expect(await lines('?correlationId=run_b2')).toEqual(['b END run_b2', 'b START run_b2']);
    const since = new Date(at(1)).toISOString();
    const until = new Date(at(6)).toISOString();
    expect(await lines(`?since=${since}&until=${until}`)).toEqual([
      'b START run_b2',
      'a END run_a1',
      'b SKIPPED run_b1',
    ]);
    expect(await lines(`?scheduler=b&kind=START&since=${since}`)).toEqual(['b START run_b2']);
  });

  it('pages with the cursor: no line twice, none left out', async () => {
    const first = (await get('?limit=2')).json();
    expect(first.events.map((e: { traceId: string; kind: string }) => `${e.kind} ${e.traceId}`)).toEqual([
      'END run_b2',
      'START run_b2',
    ]);
    const second = (await get(`?limit=2&before=${first.nextCursor}`)).json();
    const third = (await get(`?limit=2&before=${second.nextCursor}`)).json();
    expect(third.nextCursor).toBeNull();
    expect([...second.events, ...third.events].map((e: { traceId: string }) => e.traceId)).toEqual([
      'run_a1',
      'run_b1',
      'run_a1',
    ]);
  });

  it('refuses a bad instant, kind or range with problem+json naming the field', async () => {
    const bad = await get('?since=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toBe(PROBLEM);
    expect(bad.json()).toMatchObject({
      code: 'INSTANT_INVALID',
      detail: 'since: "yesterday" is not an instant',
    });
    expect((await get('?kind=STOP')).statusCode).toBe(400);
    const backwards = await get('?since=2026-06-02T00:00:00Z&until=2026-06-01T00:00:00Z');
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json()).toMatchObject({
      code: 'ARGUMENT_INVALID',
      detail: expect.stringContaining('is after until'),
    });
    expect((await get('?nope=1')).statusCode).toBe(400);
  });

  it("answers another tenant's token as a missing resource", async () => {
    const res = await get('', a.tokens.other);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(NOT_FOUND);
  });
});
