import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { tempDir } from '../support/temp.js';

// Issue #22 item 5: a scheduler's bounds (startAt, endAt, maxRuns), on both stores with a stepped
// clock: what falls outside them does not fire, a run they refuse is recorded skipped_bounds with
// a feed line naming the bound, and list says when a scheduler fires no more.

const BASE = '/brain/acme/project/ops/scheduler';
const HOURLY = 'description: hourly job\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\n';
const at = (text: string) => Date.parse(text);

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('scheduler bounds on %s (issue #22)', (dialect) => {
  async function app(yaml: string): Promise<TestApp> {
    a = await testApp(dialect);
    expect((await a.request('PUT', `${BASE}/job`, a.tokens.write, { yaml })).statusCode).toBe(201);
    return a;
  }
  const summary = async (t: TestApp) =>
    (await t.request('GET', BASE, t.tokens.read))
      .json()
      .schedulers.find((s: { name: string }) => s.name === 'job');
  const runs = async (t: TestApp) =>
    (
      await t.t.store.db
        .selectFrom('runs')
        .select(['scheduled_for', 'trigger', 'outcome', 'reason'])
        .orderBy('scheduled_for')
        .execute()
    ).map((r) => [Number(r.scheduled_for), r.trigger, r.outcome, r.reason]);
  const skippedLines = async (t: TestApp) =>
    (
      await t.t.store.db
        .selectFrom('feed')
        .select(['kind', 'outcome', 'payload'])
        .where('kind', '=', 'SKIPPED')
        .execute()
    ).map((r) => ({ outcome: r.outcome, ...JSON.parse(r.payload) }));
  async function fire(t: TestApp): Promise<void> {
    expect((await t.request('POST', `${BASE}/job/fire`, t.tokens.write)).statusCode).toBe(202);
  }

  it('starts maxRuns runs, then fires no more: list says so, and a fire is recorded skipped_bounds', async () => {
    const t = await app(`${HOURLY}maxRuns: 2\n`);
    const worker = t.t.worker();
    await worker.bootstrap();
    for (const hour of ['09', '10']) {
      t.t.clock.set(at(`2026-06-01T${hour}:00:00Z`));
      expect(await worker.tick()).toMatchObject({ fired: 1 });
      await worker.executor.settled();
    }
    expect(await summary(t)).toMatchObject({
      nextRunAt: null,
      bounds: { startAt: null, endAt: null, maxRuns: 2, runsStarted: 2, finished: 'max-runs' },
    });
    t.t.clock.set(at('2026-06-01T11:00:00Z'));
    expect(await worker.tick()).toMatchObject({ due: 0 });

    t.t.clock.set(at('2026-06-01T11:30:00.500Z'));
    await fire(t);
    await worker.reap();
    await worker.executor.settled();
    expect(await runs(t)).toEqual([
      [at('2026-06-01T09:00:00Z'), 'cron', 'completed', null],
      [at('2026-06-01T10:00:00Z'), 'cron', 'completed', null],
      [at('2026-06-01T11:30:00.500Z'), 'manual', 'skipped_bounds', 'max-runs'],
    ]);
    expect(await skippedLines(t)).toEqual([
      expect.objectContaining({ outcome: 'skipped_bounds', reason: 'max-runs', maxRuns: 2 }),
    ]);

    // Raising maxRuns lets it fire again from its next occurrence; the count goes on.
    const raised = `${HOURLY}maxRuns: 3\n`;
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml: raised })).statusCode).toBe(200);
    expect(await summary(t)).toMatchObject({
      nextRunAt: '2026-06-01T12:00:00Z',
      bounds: { maxRuns: 3, runsStarted: 2, finished: null },
    });
    await worker.stop();
  });

  it('fires from startAt until endAt, both included, then says it ended; a fire outside them is refused by the bounds', async () => {
    const t = await app(`${HOURLY}startAt: "2026-06-01T11:00:00"\nendAt: "2026-06-01T12:30:00+00:00"\n`);
    expect(await summary(t)).toMatchObject({
      nextRunAt: '2026-06-01T11:00:00Z',
      bounds: {
        startAt: '2026-06-01T11:00:00Z',
        endAt: '2026-06-01T12:30:00Z',
        maxRuns: null,
        runsStarted: null,
        finished: null,
      },
    });
    const worker = t.t.worker();
    await worker.bootstrap();
    t.t.clock.set(at('2026-06-01T08:30:00.250Z'));
    await fire(t);
    await worker.reap();
    await worker.executor.settled();
    // A catch-up at 13:10 runs 12:00 once and absorbs nothing past endAt.
    t.t.clock.set(at('2026-06-01T11:00:00Z'));
    expect(await worker.tick()).toMatchObject({ fired: 1 });
    await worker.executor.settled();
    t.t.clock.set(at('2026-06-01T13:10:00Z'));
    expect(await worker.tick()).toEqual({ due: 1, claimed: 1, coalesced: 0, fired: 1, skipped: 0 });
    await worker.executor.settled();
    expect(await summary(t)).toMatchObject({ nextRunAt: null, bounds: { finished: 'ended' } });
    await fire(t);
    await worker.reap();
    await worker.executor.settled();
    expect(await runs(t)).toEqual([
      [at('2026-06-01T08:30:00.250Z'), 'manual', 'skipped_bounds', 'before-start'],
      [at('2026-06-01T11:00:00Z'), 'cron', 'completed', null],
      [at('2026-06-01T12:00:00Z'), 'cron', 'completed', null],
      [at('2026-06-01T13:10:00.001Z'), 'manual', 'skipped_bounds', 'after-end'],
    ]);
    expect(await skippedLines(t)).toEqual([
      expect.objectContaining({ reason: 'before-start', startAt: at('2026-06-01T11:00:00Z') }),
      expect.objectContaining({ reason: 'after-end', endAt: at('2026-06-01T12:30:00Z') }),
    ]);
    await worker.stop();
  });

  it('never starts more than maxRuns runs when several workers admit fires at once (process marks)', async () => {
    a = await testApp(dialect);
    const t = a;
    const marks = join(tempDir('ursa-bounds-'), 'marks');
    const entries = await applyDirectory(
      t.t.rt,
      projectFolder({
        '_vance/recipes/mark.yaml': shellRecipe(`echo "$URSA_CORRELATION_ID" >> ${marks}`),
        '_vance/scheduler/job.yaml': cronScheduler('0 0 0 1 1 *', 'mark', 'overlap: queue\nmaxRuns: 3\n'),
      }),
      'acme',
      'ops',
      libraryActor('wes'),
    );
    expect(entries.map((e) => e.status)).toEqual(['created', 'created']);
    // PostgreSQL: three connections, as three worker processes; SQLite's share one (decisions §5).
    const runtimes =
      dialect === 'postgres' ? [t.t.rt, await t.t.peer(), await t.t.peer()] : [t.t.rt, t.t.rt, t.t.rt];
    const workers = runtimes.map((rt) => t.t.worker({}, rt));
    for (const w of workers) await w.bootstrap();
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 3; i++) {
        t.t.clock.advance(7);
        await fire(t);
      }
      await Promise.all(workers.map((w) => w.reap()));
      await Promise.all(workers.map((w) => w.executor.settled()));
    }
    const outcomes = (await runs(t)).map((r) => r[2]);
    expect(outcomes).toHaveLength(12);
    expect(outcomes.filter((o) => o === 'completed')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'skipped_bounds').length).toBeGreaterThan(0);
    // What the processes did: three of them ran, no more.
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toHaveLength(3);
    for (const w of workers) await w.stop();
  });
});
