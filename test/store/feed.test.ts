import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FeedLine } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const P = 'ops';
const MIN = 60_000;
const BASE = Date.parse('2026-03-01T00:00:00Z');

type Kind = FeedLine['kind'];

/** A feed line as the executor writes it (`Executor.appendLine`): occurrence fields in every payload. */
function line(
  kind: Kind,
  traceId: string,
  at: number,
  outcome: string,
  details: Record<string, unknown> = {},
  ref: { tenant?: string; project?: string; refId?: string } = {},
): Omit<FeedLine, 'id'> {
  return {
    tenant: ref.tenant ?? T,
    project: ref.project ?? P,
    at,
    kind,
    refType: 'SCHEDULER',
    refId: ref.refId ?? 'job',
    traceId,
    outcome,
    logPath: `_vance/logs/scheduler/job/${traceId}.md`,
    payload: { trigger: 'cron', scheduledFor: at - 1000, coalesced: false, coalescedUntil: null, ...details },
  };
}

const start = (trace: string, at: number, details: Record<string, unknown> = {}) =>
  line('START', trace, at, 'pending', {
    processId: `proc_${trace}`,
    sessionId: 'sess_1',
    runAs: 'alice',
    ...details,
  });
const end = (trace: string, at: number, outcome = 'completed', details: Record<string, unknown> = {}) =>
  line('END', trace, at, outcome, { processId: `proc_${trace}`, exitCode: 0, reason: null, ...details });

// spec §7: run history from the activity feed, on a real SQLite file and a real PostgreSQL.
describe.each(DIALECTS)('feed on %s (spec §7)', (dialect) => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await testRuntime('2026-03-01T00:00:00Z', { dialect });
  });
  afterEach(() => t.close());

  it('lists the lines of one ref newest first, pages by id, and answers latestForRef', async () => {
    const feed = t.rt.repos.feed;
    await feed.append(start('a', BASE));
    await feed.append(end('a', BASE + 5));
    await feed.append(start('b', BASE + MIN));
    await feed.append(start('x', BASE, {}));
    await feed.append(line('START', 'other', BASE, 'pending', {}, { refId: 'other' }));
    await feed.append(line('START', 'p2', BASE, 'pending', {}, { project: 'web' }));
    await feed.append(line('START', 't2', BASE, 'pending', {}, { tenant: 'globex' }));
    const all = await feed.listForRef(T, P, 'SCHEDULER', 'job', 10);
    expect(all.map((l) => [l.kind, l.traceId])).toEqual([
      ['START', 'x'],
      ['START', 'b'],
      ['END', 'a'],
      ['START', 'a'],
    ]);
    expect(all[2]).toEqual({
      id: expect.any(Number),
      tenant: T,
      project: P,
      at: BASE + 5,
      kind: 'END',
      refType: 'SCHEDULER',
      refId: 'job',
      traceId: 'a',
      outcome: 'completed',
      logPath: '_vance/logs/scheduler/job/a.md',
      payload: {
        trigger: 'cron',
        scheduledFor: BASE + 5 - 1000,
        coalesced: false,
        coalescedUntil: null,
        processId: 'proc_a',
        exitCode: 0,
        reason: null,
      },
    });
    const first = await feed.listForRef(T, P, 'SCHEDULER', 'job', 3);
    const rest = await feed.listForRef(T, P, 'SCHEDULER', 'job', 3, first[2]?.id);
    expect([...first, ...rest].map((l) => l.id)).toEqual(all.map((l) => l.id));
    expect(rest.map((l) => [l.kind, l.traceId])).toEqual([['START', 'a']]);
    expect((await feed.latestForRef(T, P, 'SCHEDULER', 'job'))?.traceId).toBe('x');
    expect(await feed.latestForRef(T, P, 'SCHEDULER', 'none')).toBeUndefined();
  });

  it('refuses a limit that is not a whole number ≥ 1 (SQLite would read -1 as "all")', async () => {
    const feed = t.rt.repos.feed;
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(feed.listForRef(T, P, 'SCHEDULER', 'job', limit)).rejects.toMatchObject({
        code: 'ARGUMENT_INVALID',
      });
    }
  });
});
