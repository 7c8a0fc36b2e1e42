import { afterEach, describe, expect, it } from 'vitest';
import { jitterOffset } from '../../src/decisions/jitter.js';
import { libraryActor } from '../../src/store/audit.js';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';

// Issue #22 item 8: describe, through REST and the agents' scheduler_get (the CLI's is in
// test/cli/scheduler-commands.test.ts), on both stores with a stepped clock.

const BASE = '/brain/acme/project/ops/scheduler';
const YAML =
  'description: hourly job\ncron: "0 0 * * * *"\ntimezone: Europe/Berlin\nrecipe: noop\n' +
  'jitter: PT10M\nmaxRuns: 5\npauseOnFailure: 2\nretry: {attempts: 2, backoff: PT30S}\n';
const OFFSET = jitterOffset({ tenant: 'acme', project: 'ops', name: 'job' }, 600_000);
const at = (text: string) => Date.parse(text);

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('describe on %s (issue #22)', (dialect) => {
  it('describes next fires with jitter, DST notes, bounds left, run counts and newest runs; the tool counts what an agent may see', async () => {
    a = await testApp(dialect);
    const t = a;
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml: YAML })).statusCode).toBe(201);
    const worker = t.t.worker();
    await worker.bootstrap();
    // Two runs on time (each starts at its jittered instant), then one that absorbs a backlog.
    for (const [claimAt, startAt] of [
      [at('2026-06-01T09:00:00Z'), at('2026-06-01T09:00:00Z') + OFFSET],
      [at('2026-06-01T10:00:00Z'), at('2026-06-01T10:00:00Z') + OFFSET],
      [at('2026-06-01T13:30:00Z'), at('2026-06-01T13:30:00Z')],
    ] as const) {
      t.t.clock.set(claimAt);
      expect(await worker.tick()).toMatchObject({ claimed: 1 });
      t.t.clock.set(startAt);
      await worker.executor.settled();
    }
    const res = await t.request('GET', `${BASE}/job/describe?count=2`, t.tokens.read);
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(d).toMatchObject({
      name: 'job',
      timezone: 'Europe/Berlin',
      enabled: true,
      paused: null,
      jitter: 'PT10M',
      pauseOnFailure: 2,
      retry: { attempts: 2, backoff: 'PT30S' },
      idle: null,
      nextRunAt: '2026-06-01T14:00:00Z',
      bounds: { startAt: null, endAt: null, maxRuns: 5, runsStarted: 3, finished: null },
      runsLeft: 2,
      upcoming: ['14', '15'].map((h) => ({
        occurrence: `2026-06-01T${h}:00:00Z`,
        firesAt: iso(at(`2026-06-01T${h}:00:00Z`) + OFFSET),
      })),
      dst: [
        {
          transition: '2026-10-25T01:00:00Z',
          effect: 'twice',
          offsetBefore: '+02:00',
          offsetAfter: '+01:00',
          count: 1,
        },
        {
          transition: '2027-03-28T01:00:00Z',
          effect: 'shifted',
          offsetBefore: '+01:00',
          offsetAfter: '+02:00',
          count: 1,
        },
      ],
      counts: { runs: 3, byOutcome: { completed: 3 }, coalesced: 1 },
    });
    expect(
      d.recentRuns.map((r: { scheduledFor: string; outcome: string; coalesced: boolean }) => [
        r.scheduledFor,
        r.outcome,
        r.coalesced,
      ]),
    ).toEqual([
      ['2026-06-01T11:00:00Z', 'completed', true],
      ['2026-06-01T10:00:00Z', 'completed', false],
      ['2026-06-01T09:00:00Z', 'completed', false],
    ]);
    expect((await t.request('GET', `${BASE}/job/describe?count=0`, t.tokens.read)).statusCode).toBe(400);

    // A run claimed while the scheduler was hidden is not counted for an agent (spec §10b), and
    // what maxRuns counted is not said (it would count that run).
    await t.t.store.db
      .updateTable('runs')
      .set({ lock_mode: 'hidden' })
      .where('scheduled_for', '=', at('2026-06-01T09:00:00Z'))
      .execute();
    const get = (name: string) =>
      callTool(t.t.rt, { tenant: 'acme', project: 'ops', user: 'mia' }, TOOLS, 'scheduler_get', {
        name,
        count: 1,
      });
    expect(await get('job')).toMatchObject({
      ok: true,
      output: {
        name: 'job',
        locked: false,
        status: {
          jitter: 'PT10M',
          bounds: { maxRuns: 5, runsStarted: null },
          runsLeft: null,
          upcoming: [d.upcoming[0]],
          dst: d.dst,
          counts: { runs: 2, byOutcome: { completed: 2 }, coalesced: 1 },
          // Its newest runs with their state (issue #23), the hidden one left out.
          recentRuns: [
            { scheduledFor: '2026-06-01T11:00:00Z', state: 'ended', outcome: 'completed' },
            { scheduledFor: '2026-06-01T10:00:00Z', state: 'ended', outcome: 'completed' },
          ],
        },
      },
    });
    expect((await t.request('GET', `${BASE}/job/describe`, t.tokens.read)).json().counts.runs).toBe(3);
    // A full project scheduler over a hidden _tenant one: none of the name's runs is counted.
    const hiddenShared = YAML.replace('recipe: noop\n', 'recipe: noop\nlockMode: hidden\n');
    expect(
      (
        await t.request('PUT', '/brain/acme/project/_tenant/scheduler/job', t.tokens.admin, {
          yaml: hiddenShared,
        })
      ).statusCode,
    ).toBe(201);
    expect(await get('job')).toMatchObject({
      ok: true,
      output: {
        status: { runsLeft: null, counts: { runs: 0, byOutcome: {}, coalesced: 0 }, recentRuns: [] },
      },
    });
    // A document that does not load still gives the agent its YAML, to repair.
    await t.t.rt.repos.documents.put(
      { tenant: 'acme', project: 'ops', path: '_vance/scheduler/broken.yaml' },
      'description: b\ncron: "0 0 * * * *"\nrecipe: missing\n',
      libraryActor('wes'),
      t.t.clock.now(),
    );
    expect(await get('broken')).toMatchObject({ ok: true, output: { name: 'broken', status: null } });
    await worker.stop();
  });
});
