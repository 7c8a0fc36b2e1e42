import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestApp, testApp } from '../support/http.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { tempDir } from '../support/temp.js';

// Issue #22 item 2: pauseOnFailure pauses a scheduler after N failed runs in a row, on both stores
// with a stepped clock; a completed run starts the count over, and so does a resume.

const BASE = '/brain/acme/project/ops/scheduler';
const at = (text: string) => Date.parse(text);

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('pause on failure on %s (issue #22)', (dialect) => {
  it('pauses after N failed runs in a row with a note and an inbox item; a success or a resume starts over', async () => {
    a = await testApp(dialect);
    const t = a;
    const dir = tempDir('ursa-pause-on-failure-');
    const marks = join(dir, 'marks');
    const failing = join(dir, 'failing');
    // The process marks each run, and fails while the flag file exists.
    const entries = await applyDirectory(
      t.t.rt,
      projectFolder({
        '_vance/recipes/flaky.yaml': shellRecipe(
          `echo "$URSA_CORRELATION_ID" >> ${marks}; test ! -e ${failing}`,
        ),
        '_vance/scheduler/job.yaml': cronScheduler('0 0 * * * *', 'flaky', 'pauseOnFailure: 2\n'),
      }),
      'acme',
      'ops',
      libraryActor('wes'),
    );
    expect(entries.map((e) => e.status)).toEqual(['created', 'created']);
    const worker = t.t.worker();
    await worker.bootstrap();
    const summary = async () =>
      (await t.request('GET', BASE, t.tokens.read))
        .json()
        .schedulers.find((s: { name: string }) => s.name === 'job');
    const hour = async (h: string, fail: boolean) => {
      if (fail) writeFileSync(failing, '');
      else rmSync(failing, { force: true });
      t.t.clock.set(at(`2026-06-01T${h}:00:00Z`));
      expect(await worker.tick()).toMatchObject({ fired: 1 });
      await worker.executor.settled();
    };
    const outcomes = async () =>
      (await t.t.store.db.selectFrom('runs').select('outcome').orderBy('scheduled_for').execute()).map(
        (r) => r.outcome,
      );

    await hour('09', true);
    expect(await summary()).toMatchObject({ enabled: true, paused: null });
    await hour('10', true);
    const lastRun = (
      await t.t.store.db
        .selectFrom('runs')
        .select('correlation_id')
        .orderBy('scheduled_for', 'desc')
        .executeTakeFirstOrThrow()
    ).correlation_id;
    expect(await summary()).toMatchObject({
      enabled: false,
      nextRunAt: null,
      paused: {
        note: `2 failed runs in a row (pauseOnFailure; the last: ${lastRun})`,
        by: 'ursa',
        at: '2026-06-01T10:00:00Z',
      },
    });
    const inbox = (await t.request('GET', '/brain/acme/inbox', t.tokens.write)).json();
    expect(inbox.items.filter((i: { kind: string }) => i.kind === 'scheduler-paused')).toEqual([
      expect.objectContaining({
        title: 'job paused after 2 failed runs in a row',
        scheduler: 'job',
        correlationId: lastRun,
      }),
    ]);
    // Paused: the next occurrence is not run.
    t.t.clock.set(at('2026-06-01T11:00:00Z'));
    expect(await worker.tick()).toMatchObject({ due: 0 });

    // A resume starts the count over: one more failure does not pause it.
    expect((await t.request('POST', `${BASE}/job/resume`, t.tokens.write)).statusCode).toBe(200);
    await hour('12', true);
    expect(await summary()).toMatchObject({ enabled: true, paused: null });
    // A completed run starts it over too.
    await hour('13', false);
    await hour('14', true);
    expect(await summary()).toMatchObject({ enabled: true, paused: null });
    await hour('15', true);
    expect(await summary()).toMatchObject({ enabled: false, paused: { by: 'ursa' } });

    expect(await outcomes()).toEqual(['failed', 'failed', 'failed', 'completed', 'failed', 'failed']);
    // What the processes did: six runs, no more.
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toHaveLength(6);
    await worker.stop();
  });
});
