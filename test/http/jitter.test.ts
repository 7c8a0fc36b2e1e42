import { afterEach, describe, expect, it } from 'vitest';
import { jitterOffset } from '../../src/decisions/jitter.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { until } from '../support/until.js';

// Issue #22 item 4: jitter delays each fire by the scheduler's own offset within the bound, on
// both stores with a stepped clock; the run keeps its nominal occurrence.

const BASE = '/brain/acme/project/ops/scheduler';
const YAML = 'description: hourly job\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\njitter: PT10M\n';
const OFFSET = jitterOffset({ tenant: 'acme', project: 'ops', name: 'job' }, 600_000);

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('jitter on %s (issue #22)', (dialect) => {
  it('starts each run at its occurrence plus the offset, with scheduledFor the occurrence', async () => {
    expect(OFFSET).toBeGreaterThan(1_000);
    a = await testApp(dialect);
    const t = a;
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml: YAML })).statusCode).toBe(201);
    const worker = t.t.worker();
    await worker.bootstrap();
    const runs = async () =>
      (
        await t.t.store.db
          .selectFrom('runs')
          .select(['scheduled_for', 'state', 'started_at'])
          .orderBy('scheduled_for')
          .execute()
      ).map((r) => [Number(r.scheduled_for), r.state, r.started_at === null ? null : Number(r.started_at)]);
    for (const hour of ['09', '10']) {
      const occurrence = Date.parse(`2026-06-01T${hour}:00:00Z`);
      t.t.clock.set(occurrence);
      expect(await worker.tick()).toMatchObject({ claimed: 1 });
      await until(() => worker.executor.waitingForInstant === 1, 'the run waits for its jittered instant');
      // Claimed at the occurrence, not started before its jittered instant.
      expect((await runs()).at(-1)).toEqual([occurrence, 'claimed', null]);
      t.t.clock.set(occurrence + OFFSET);
      await worker.executor.settled();
      expect((await runs()).at(-1)).toEqual([occurrence, 'ended', occurrence + OFFSET]);
    }
    await worker.stop();
  });

  it('previews the next fires with the offset and within maxRuns, none while paused (issue #22)', async () => {
    a = await testApp(dialect);
    const t = a;
    const yaml = `${YAML}maxRuns: 2\n`;
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml })).statusCode).toBe(201);
    const upcoming = (query: string) => t.request('GET', `${BASE}/job/upcoming${query}`, t.tokens.read);
    const res = await upcoming('?count=5&from=2026-06-01T09:30:00Z');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: 'job',
      timezone: 'UTC',
      jitter: 'PT10M',
      idle: null,
      fires: ['10', '11'].map((hour) => ({
        occurrence: `2026-06-01T${hour}:00:00Z`,
        firesAt: iso(Date.parse(`2026-06-01T${hour}:00:00Z`) + OFFSET),
      })),
    });
    // From the clock's now (08:00) when no from is given.
    expect((await upcoming('?count=1')).json().fires).toEqual([
      { occurrence: '2026-06-01T09:00:00Z', firesAt: iso(Date.parse('2026-06-01T09:00:00Z') + OFFSET) },
    ]);
    const bad = await upcoming('?from=tomorrow');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      code: 'INSTANT_INVALID',
      detail: 'from: "tomorrow" is not an instant',
    });
    expect((await upcoming('?count=0')).statusCode).toBe(400);
    expect((await upcoming('?count=5&extra=1')).statusCode).toBe(400);
    const pause = await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'quiet week' });
    expect(pause.statusCode).toBe(200);
    expect((await upcoming('')).json()).toMatchObject({ idle: 'paused', fires: [] });
  });
});
