import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import type { FeedLine, FeedRun } from '../../src/store/index.js';
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
const skipped = (trace: string, at: number, reason = 'overlap', outcome = 'skipped_overlap') =>
  line('SKIPPED', trace, at, outcome, { reason });

/** Every page of listRuns at `limit`, and the cursors it handed out. */
async function allPages(
  t: TestRuntime,
  limit: number,
): Promise<{ pages: FeedRun[][]; cursors: (number | null)[] }> {
  const pages: FeedRun[][] = [];
  const cursors: (number | null)[] = [];
  let before: number | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page = await t.rt.repos.feed.listRuns(
      T,
      P,
      'job',
      before === undefined ? { limit } : { limit, before },
    );
    pages.push(page.runs);
    cursors.push(page.nextCursor);
    if (page.nextCursor === null) return { pages, cursors };
    before = page.nextCursor;
  }
  throw new Error('listRuns does not end');
}

/** A small deterministic random generator (mulberry32), so a failing interleaving can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

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
      await expect(feed.listRuns(T, P, 'job', { limit })).rejects.toBeInstanceOf(UrsaError);
    }
    await expect(feed.listRuns(T, P, 'job', { limit: 1, before: 2.5 })).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
    });
  });

  it('joins a run’s lines by traceId: START+END, SKIPPED alone, START only (pending), END only', async () => {
    const feed = t.rt.repos.feed;
    await feed.append(start('done', BASE));
    await feed.append(end('done', BASE + 1500, 'completed', { durationMs: 1500 }));
    await feed.append(skipped('skip', BASE + MIN, 'misfire', 'skipped_misfire'));
    await feed.append(start('failing', BASE + 2 * MIN));
    await feed.append(
      end('failing', BASE + 2 * MIN + 40, 'failed', { durationMs: 40, exitCode: 3, reason: 'exit code 3' }),
    );
    await feed.append(line('END', 'gone', BASE + 3 * MIN, 'failed', { reason: 'scheduler-gone' }));
    await feed.append(start('running', BASE + 4 * MIN));
    await feed.append(line('START', 'elsewhere', BASE, 'pending', {}, { refId: 'other' }));

    const page = await feed.listRuns(T, P, 'job', { limit: 10 });
    expect(page.nextCursor).toBeNull();
    const log = (trace: string) => `_vance/logs/scheduler/job/${trace}.md`;
    expect(page.runs).toEqual([
      {
        correlationId: 'running',
        scheduler: 'job',
        trigger: 'cron',
        scheduledFor: BASE + 4 * MIN - 1000,
        startedAt: BASE + 4 * MIN,
        endedAt: null,
        outcome: 'pending',
        durationMs: null,
        coalesced: false,
        coalescedUntil: null,
        reason: null,
        processId: 'proc_running',
        sessionId: 'sess_1',
        logPath: log('running'),
      },
      {
        correlationId: 'gone',
        scheduler: 'job',
        trigger: 'cron',
        scheduledFor: BASE + 3 * MIN - 1000,
        startedAt: null,
        endedAt: BASE + 3 * MIN,
        outcome: 'failed',
        durationMs: null,
        coalesced: false,
        coalescedUntil: null,
        reason: 'scheduler-gone',
        processId: null,
        sessionId: null,
        logPath: log('gone'),
      },
      {
        correlationId: 'failing',
        scheduler: 'job',
        trigger: 'cron',
        scheduledFor: BASE + 2 * MIN - 1000,
        startedAt: BASE + 2 * MIN,
        endedAt: BASE + 2 * MIN + 40,
        outcome: 'failed',
        durationMs: 40,
        coalesced: false,
        coalescedUntil: null,
        reason: 'exit code 3',
        processId: 'proc_failing',
        sessionId: 'sess_1',
        logPath: log('failing'),
      },
      {
        correlationId: 'skip',
        scheduler: 'job',
        trigger: 'cron',
        scheduledFor: BASE + MIN - 1000,
        startedAt: null,
        endedAt: null,
        outcome: 'skipped_misfire',
        durationMs: null,
        coalesced: false,
        coalescedUntil: null,
        reason: 'misfire',
        processId: null,
        sessionId: null,
        logPath: log('skip'),
      },
      {
        correlationId: 'done',
        scheduler: 'job',
        trigger: 'cron',
        scheduledFor: BASE - 1000,
        startedAt: BASE,
        endedAt: BASE + 1500,
        outcome: 'completed',
        durationMs: 1500,
        coalesced: false,
        coalescedUntil: null,
        reason: null,
        processId: 'proc_done',
        sessionId: 'sess_1',
        logPath: log('done'),
      },
    ]);
    expect((await feed.listRuns(T, 'web', 'job', { limit: 10 })).runs).toEqual([]);
    expect((await feed.listRuns('globex', P, 'job', { limit: 10 })).runs).toEqual([]);
  });

  it('carries the coalesced fields and the trigger; a lost worker’s END (no durationMs) still has a duration', async () => {
    const feed = t.rt.repos.feed;
    const coalescing = { trigger: 'at', scheduledFor: BASE, coalesced: true, coalescedUntil: BASE + 9 * MIN };
    await feed.append(start('late', BASE + 10 * MIN, coalescing));
    await feed.append(end('late', BASE + 10 * MIN + 250, 'failed', { ...coalescing, reason: 'worker-lost' }));
    const { runs } = await feed.listRuns(T, P, 'job', { limit: 5 });
    expect(runs).toEqual([
      expect.objectContaining({
        correlationId: 'late',
        trigger: 'at',
        scheduledFor: BASE,
        coalesced: true,
        coalescedUntil: BASE + 9 * MIN,
        startedAt: BASE + 10 * MIN,
        endedAt: BASE + 10 * MIN + 250,
        durationMs: 250,
        outcome: 'failed',
        reason: 'worker-lost',
      }),
    ]);
  });

  it('pages 7 runs whose END lands after the next START 3+3+1, none split, lost or repeated', async () => {
    const feed = t.rt.repos.feed;
    // S1 S2 E1 S3 E2 … S7 E6 E7: every END straddles the START of the run after it.
    await feed.append(start('r1', BASE));
    for (let i = 2; i <= 7; i++) {
      await feed.append(start(`r${i}`, BASE + i * MIN));
      await feed.append(end(`r${i - 1}`, BASE + i * MIN + 1, 'completed', { durationMs: MIN + 1 }));
    }
    await feed.append(end('r7', BASE + 8 * MIN, 'completed', { durationMs: MIN }));
    const { pages, cursors } = await allPages(t, 3);
    expect(pages.map((p) => p.map((r) => r.correlationId))).toEqual([
      ['r7', 'r6', 'r5'],
      ['r4', 'r3', 'r2'],
      ['r1'],
    ]);
    // Every run is whole: its START and its END, whichever page its END line fell on.
    for (const run of pages.flat()) {
      expect(run.outcome).toBe('completed');
      expect(run.endedAt).not.toBeNull();
      expect(run.startedAt).not.toBeNull();
    }
    // The cursor is the smallest line id of the page: the START of its oldest run.
    const starts = (await feed.listForRef(T, P, 'SCHEDULER', 'job', 100)).filter((l) => l.kind === 'START');
    const startId = (trace: string) => starts.find((l) => l.traceId === trace)?.id;
    expect(cursors).toEqual([startId('r5'), startId('r2'), null]);
    // A page that ends exactly at the last run says there is no next one.
    expect((await feed.listRuns(T, P, 'job', { limit: 7 })).nextCursor).toBeNull();
    expect((await feed.listRuns(T, P, 'job', { limit: 6 })).nextCursor).toBe(startId('r2'));
  });

  it('keeps a long run whole while its skipped ticks fill the pages above its START', async () => {
    const feed = t.rt.repos.feed;
    await feed.append(start('long', BASE));
    for (let i = 1; i <= 6; i++) await feed.append(skipped(`s${i}`, BASE + i * MIN));
    await feed.append(end('long', BASE + 7 * MIN, 'completed', { durationMs: 7 * MIN }));
    await feed.append(line('END', 'gone', BASE + 8 * MIN, 'failed', { reason: 'scheduler-gone' }));
    const { pages } = await allPages(t, 3);
    expect(pages.map((p) => p.map((r) => `${r.correlationId}:${r.outcome}`))).toEqual([
      ['gone:failed', 's6:skipped_overlap', 's5:skipped_overlap'],
      ['s4:skipped_overlap', 's3:skipped_overlap', 's2:skipped_overlap'],
      ['s1:skipped_overlap', 'long:completed'],
    ]);
    expect(pages[2]?.[1]).toMatchObject({ startedAt: BASE, endedAt: BASE + 7 * MIN, durationMs: 7 * MIN });
  });

  it('pages any interleaving of runs like one long page, for every page size', async () => {
    const feed = t.rt.repos.feed;
    const next = random(20260301);
    type Shape = 'full' | 'skipped' | 'pending' | 'endOnly';
    const shapes: Shape[] = ['full', 'full', 'full', 'skipped', 'pending', 'endOnly'];
    // 24 runs; a full run's END comes 1-6 lines after its START, between the lines of later runs.
    const expected: string[] = [];
    let at = BASE;
    const delayed: { due: number; line: Omit<FeedLine, 'id'> }[] = [];
    let appended = 0;
    const append = async (l: Omit<FeedLine, 'id'>) => {
      await feed.append(l);
      appended++;
      for (const d of delayed.filter((x) => x.due <= appended)) {
        delayed.splice(delayed.indexOf(d), 1);
        await feed.append(d.line);
        appended++;
      }
    };
    for (let i = 0; i < 24; i++) {
      const trace = `run${String(i).padStart(2, '0')}`;
      const shape = shapes[Math.floor(next() * shapes.length)] as Shape;
      at += MIN;
      expected.unshift(trace);
      if (shape === 'full') {
        delayed.push({ due: appended + 1 + Math.floor(next() * 6), line: end(trace, at + 30_000) });
        await append(start(trace, at));
      } else if (shape === 'skipped') await append(skipped(trace, at));
      else if (shape === 'pending') await append(start(trace, at));
      else await append(line('END', trace, at, 'failed', { reason: 'scheduler-gone' }));
    }
    for (const d of delayed) await feed.append(d.line);

    const whole = await feed.listRuns(T, P, 'job', { limit: 100 });
    expect(whole.runs.map((r) => r.correlationId)).toEqual(expected);
    for (let limit = 1; limit <= 7; limit++) {
      const { pages } = await allPages(t, limit);
      expect(pages.flat()).toEqual(whole.runs);
      expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
    }
  });
});
