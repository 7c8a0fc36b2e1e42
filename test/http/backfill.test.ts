import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { tempDir } from '../support/temp.js';

// Issue #22 item 3: a backfill over REST, asked twice at once, run by several workers (three
// PostgreSQL connections as three worker processes): each occurrence once, oldest first, one
// after another — asserted from the marks the processes wrote.

const BASE = '/brain/acme/project/ops/scheduler';

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('backfill over REST on %s (issue #22)', (dialect) => {
  it('runs each occurrence once, oldest first and one at a time, with several workers and two requests at once', async () => {
    a = await testApp(dialect);
    const t = a;
    const marks = join(tempDir('ursa-backfill-'), 'marks');
    // Each process marks its start and end; a pause between them gives a second start a chance to overlap.
    const script = `echo "start $URSA_SCHEDULED_FOR" >> ${marks}; sleep 0.05; echo "end $URSA_SCHEDULED_FOR" >> ${marks}`;
    await applyDirectory(
      t.t.rt,
      projectFolder({
        '_vance/recipes/mark.yaml': shellRecipe(script),
        '_vance/scheduler/hourly.yaml': cronScheduler('0 0 * * * *', 'mark', 'overlap: queue\n'),
      }),
      'acme',
      'ops',
      libraryActor('wes'),
    );
    const runtimes =
      dialect === 'postgres' ? [t.t.rt, await t.t.peer(), await t.t.peer()] : [t.t.rt, t.t.rt, t.t.rt];
    const workers = runtimes.map((rt) => t.t.worker({}, rt));
    for (const w of workers) await w.bootstrap();

    t.t.clock.set(Date.parse('2026-06-01T09:30:00Z'));
    const body = { from: '2026-06-01T03:00:00Z', to: '2026-06-01T08:00:00Z' };
    const [one, two] = await Promise.all([
      t.request('POST', `${BASE}/hourly/backfill`, t.tokens.write, body),
      t.request('POST', `${BASE}/hourly/backfill`, t.tokens.write, body),
    ]);
    expect([one?.statusCode, two?.statusCode]).toEqual([202, 202]);
    const results = [one?.json(), two?.json()];
    expect(results.map((r) => r.occurrences)).toEqual([6, 6]);
    // Between them, the six occurrences were queued once.
    expect(results.map((r) => r.queued).reduce((x, y) => x + y)).toBe(6);
    expect(results.map((r) => r.queued + r.existing)).toEqual([6, 6]);

    const pending = async () =>
      (
        await t.t.store.db
          .selectFrom('runs')
          .select('correlation_id')
          .where('state', 'in', ['queued', 'started'])
          .execute()
      ).length;
    for (let pass = 0; pass < 30 && (await pending()) > 0; pass++) {
      await Promise.all(workers.map((w) => w.reap()));
      await Promise.all(workers.map((w) => w.executor.settled()));
    }
    const hours = ['03', '04', '05', '06', '07', '08'].map((h) => `2026-06-01T${h}:00:00Z`);
    // What the processes did: one after another, oldest first, each once.
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toEqual(
      hours.flatMap((h) => [`start ${h}`, `end ${h}`]),
    );
    const runs = await t.t.store.db
      .selectFrom('runs')
      .select(['trigger', 'outcome'])
      .orderBy('scheduled_for')
      .execute();
    expect(runs).toEqual(hours.map(() => ({ trigger: 'backfill', outcome: 'completed' })));
    // The feed's lines and the REST run list say it was a backfill.
    const listed = (await t.request('GET', `${BASE}/hourly/runs?limit=10`, t.tokens.write)).json();
    expect(listed.runs.map((r: { trigger: string }) => r.trigger)).toEqual(hours.map(() => 'backfill'));

    // A range over the limit is refused with its count, a paused scheduler with its note.
    const tooMany = await t.request('POST', `${BASE}/hourly/backfill`, t.tokens.write, {
      from: '2026-01-01T00:00:00Z',
      to: '2026-06-01T00:00:00Z',
    });
    expect([tooMany.statusCode, tooMany.json().code]).toEqual([400, 'ARGUMENT_INVALID']);
    expect(tooMany.json().detail).toContain('3,625 occurrences');
    const extra = await t.request('POST', `${BASE}/hourly/backfill`, t.tokens.write, { ...body, until: 'x' });
    expect(extra.statusCode).toBe(400);
    expect(
      (await t.request('POST', `${BASE}/hourly/pause`, t.tokens.write, { note: 'quiet' })).statusCode,
    ).toBe(200);
    const paused = await t.request('POST', `${BASE}/hourly/backfill`, t.tokens.write, body);
    expect([paused.statusCode, paused.json().code]).toEqual([409, 'SCHEDULER_PAUSED']);
    expect(paused.json().detail).toContain('quiet');
    // A reader may not backfill.
    expect((await t.request('POST', `${BASE}/hourly/backfill`, t.tokens.read, body)).statusCode).toBe(403);
    for (const w of workers) await w.stop();
  });
});
