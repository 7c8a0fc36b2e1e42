import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCron } from '../../src/cron/index.js';
import { accountOccurrences, occurrencesBetween } from '../../src/decisions/accounting.js';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { timeZone } from '../../src/time/zone.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { controlledEngine } from '../support/engine.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const doc = (extra: string, cron = '*/10 * * * * *', recipe = 'ok') =>
  `description: test\ncron: "${cron}"\nrecipe: ${recipe}\n${extra}`;

async function apply(rt: Runtime, files: Record<string, string>, by = 'alice') {
  return applyDirectory(rt, projectFolder(files), T, P, libraryActor(by));
}

async function lines(rt: Runtime, name: string) {
  return (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', name, 100)).reverse();
}

// decisions §4 (issue #5): what a catch-up after an outage does under each misfire policy.
describe.each(DIALECTS)('catch-up after an outage on %s (decisions §4)', (dialect) => {
  async function outage(schedulers: Record<string, string>, back = '2026-06-01T09:00:05Z') {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await apply(t.rt, { '_vance/recipes/ok.yaml': shellRecipe('true'), ...schedulers });
    const worker = t.worker();
    await worker.bootstrap();
    // Down from 08:00:00 to 09:00:05: 360 occurrences of each 10-second schedule missed.
    t.clock.set(Date.parse(back));
    const result = await worker.tick();
    await worker.executor.settled();
    return { t, result };
  }

  // Issue #20: the newest missed occurrence decides under misfire: skip, as for catchUpWindow.
  it('misfire: skip runs the newest missed occurrence within the threshold; one SKIPPED line names the older instants and why (issue #20)', async () => {
    const marks = join(mkdtempSync(join(tmpdir(), 'ursa-misfire-')), 'marks');
    cleanups.push(() => rmSync(dirname(marks), { recursive: true, force: true }));
    const { t, result } = await outage({
      '_vance/recipes/mark.yaml': shellRecipe(`echo "$URSA_SCHEDULER $URSA_SCHEDULED_FOR" >> ${marks}`),
      '_vance/scheduler/a.yaml': doc('misfire: skip\n', undefined, 'mark'),
      '_vance/scheduler/b.yaml': doc('misfire: skip\n', undefined, 'mark'),
    });
    // 08:00:10 … 08:59:50 are older than the 60 s threshold at 09:00:05; 09:00:00 is not.
    expect(result).toEqual({ due: 2, claimed: 2, coalesced: 2, fired: 2, skipped: 2 });
    // The engine's own marks: one run per scheduler, for the newest occurrence.
    expect(readFileSync(marks, 'utf8').split('\n').filter(Boolean).sort()).toEqual([
      'a 2026-06-01T09:00:00Z',
      'b 2026-06-01T09:00:00Z',
    ]);
    for (const name of ['a', 'b']) {
      const feed = await lines(t.rt, name);
      expect(feed.map((l) => [l.kind, l.outcome, iso(l.payload.scheduledFor as number)])).toEqual([
        ['SKIPPED', 'skipped_misfire', '2026-06-01T08:00:10Z'],
        ['START', 'pending', '2026-06-01T09:00:00Z'],
        ['END', 'completed', '2026-06-01T09:00:00Z'],
      ]);
      const skipped = feed[0]?.payload as Record<string, number | string>;
      expect({
        reason: skipped.reason,
        skippedFirst: iso(skipped.skippedFirst as number),
        skippedLast: iso(skipped.skippedLast as number),
        runsInstead: iso(skipped.runsInstead as number),
      }).toEqual({
        reason: 'misfire-threshold',
        skippedFirst: '2026-06-01T08:00:10Z',
        skippedLast: '2026-06-01T08:59:50Z',
        runsInstead: '2026-06-01T09:00:00Z',
      });
      expect(feed[1]?.payload.coalesced).toBe(false);
    }
    // Every occurrence of the outage is accounted once: 359 by the skipped run, 1 by the run.
    const runs = await t.store.db
      .selectFrom('runs')
      .select(['scheduled_for', 'coalesced_until'])
      .where('name', '=', 'a')
      .execute();
    const account = accountOccurrences(
      occurrencesBetween(
        {
          trigger: { kind: 'cron', expression: '*/10 * * * * *', cron: parseCron('*/10 * * * * *') },
          zone: timeZone('UTC'),
        },
        Date.parse('2026-06-01T08:00:10Z'),
        Date.parse('2026-06-01T09:00:00Z'),
      ),
      runs.map((r) => ({
        scheduledFor: Number(r.scheduled_for),
        coalescedUntil: r.coalesced_until === null ? null : Number(r.coalesced_until),
      })),
    );
    expect(account).toMatchObject({ expected: 360, served: 2, absorbed: 358, missing: [], doubled: [] });
    const state = await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'a' });
    expect([iso(state?.nextRunAt as number), iso(state?.lastScheduledAt as number)]).toEqual([
      '2026-06-01T09:00:10Z',
      '2026-06-01T09:00:00Z',
    ]);
  });

  it('misfire: skip runs nothing when the newest missed occurrence is older than the threshold too, and says which instants and why', async () => {
    const { t, result } = await outage(
      { '_vance/scheduler/a.yaml': doc('misfire: skip\n', '0 */5 * * * *') },
      '2026-06-01T09:01:05Z',
    );
    expect(result).toEqual({ due: 1, claimed: 1, coalesced: 1, fired: 0, skipped: 1 });
    const feed = await lines(t.rt, 'a');
    expect(
      feed.map((l) => [
        l.kind,
        l.outcome,
        l.payload.reason,
        iso(l.payload.skippedFirst as number),
        iso(l.payload.skippedLast as number),
        l.payload.runsInstead,
      ]),
    ).toEqual([
      [
        'SKIPPED',
        'skipped_misfire',
        'misfire-threshold',
        '2026-06-01T08:05:00Z',
        '2026-06-01T09:00:00Z',
        undefined,
      ],
    ]);
    expect(await t.store.db.selectFrom('processes').select('id').execute()).toEqual([]);
    expect(
      iso((await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'a' }))?.nextRunAt as number),
    ).toBe('2026-06-01T09:05:00Z');
  });

  it('misfire: once with a catchUpWindow shorter than the outage runs nothing and says why', async () => {
    const { t, result } = await outage({ '_vance/scheduler/a.yaml': doc('catchUpWindow: PT2S\n') });
    expect(result).toMatchObject({ claimed: 1, fired: 0, skipped: 1 });
    const feed = await lines(t.rt, 'a');
    expect(feed.map((l) => [l.kind, l.outcome, l.payload.reason])).toEqual([
      ['SKIPPED', 'skipped_misfire', 'catch-up-window'],
    ]);
  });

  it('misfire: once without a window runs once and names the occurrences it absorbed', async () => {
    const { t, result } = await outage({ '_vance/scheduler/a.yaml': doc('') });
    expect(result).toEqual({ due: 1, claimed: 1, coalesced: 1, fired: 1, skipped: 0 });
    const [start, end] = await lines(t.rt, 'a');
    expect(start?.payload).toMatchObject({
      reason: 'catch-up',
      scheduledFor: Date.parse('2026-06-01T08:00:10Z'),
      coalesced: true,
      absorbed: 359,
      absorbedFirst: Date.parse('2026-06-01T08:00:20Z'),
      absorbedLast: Date.parse('2026-06-01T09:00:00Z'),
    });
    expect(end?.outcome).toBe('completed');
    const log = await t.rt.repos.documents.get({ tenant: T, project: P, path: end?.logPath as string });
    expect(log?.body).toContain('absorbed: 359');
    expect(log?.body).toContain(
      '359 later occurrence(s), from 2026-06-01T08:00:20Z to 2026-06-01T09:00:00Z, were already due and were absorbed into it',
    );
  });
});

// spec §6, decisions §2, spec §12 (issue #5).
describe.each(DIALECTS)('sessions, enabling, inbox and process status on %s', (dialect) => {
  it('a runAs change creates _ursascheduler_<name>_v2 and leaves the old session with its processes (spec §6)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await t.rt.repos.users.ensure(T, 'bob', 0);
    await apply(t.rt, { '_vance/recipes/ok.yaml': shellRecipe('true'), '_vance/scheduler/a.yaml': doc('') });
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    await apply(t.rt, { '_vance/scheduler/a.yaml': doc('runAs: bob\n') });
    t.clock.set(Date.parse('2026-06-01T08:00:20Z'));
    await worker.tick();
    await worker.executor.settled();
    const sessions = await t.store.db
      .selectFrom('sessions')
      .select(['name', 'owner_user', 'status', 'id'])
      .orderBy('version')
      .execute();
    expect(sessions.map((s) => [s.name, s.owner_user, s.status])).toEqual([
      ['_ursascheduler_a', 'alice', 'idle'],
      ['_ursascheduler_a_v2', 'bob', 'idle'],
    ]);
    const processes = await t.store.db
      .selectFrom('processes')
      .select(['session_id', 'owner_user'])
      .orderBy('created_at')
      .execute();
    expect(processes).toEqual([
      { session_id: sessions[0]?.id, owner_user: 'alice' },
      { session_id: sessions[1]?.id, owner_user: 'bob' },
    ]);
  });

  it('enabled: false pauses without a catch-up storm; re-enabled, the next occurrence counts from then', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await apply(t.rt, {
      '_vance/recipes/ok.yaml': shellRecipe('true'),
      '_vance/scheduler/a.yaml': doc('enabled: false\n'),
    });
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T10:00:00Z'));
    expect(await worker.tick()).toMatchObject({ due: 0 });
    t.clock.set(Date.parse('2026-06-01T10:00:03Z'));
    await apply(t.rt, { '_vance/scheduler/a.yaml': doc('enabled: true\n') });
    const state = await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'a' });
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T10:00:10Z');
    t.clock.set(Date.parse('2026-06-01T10:00:10Z'));
    expect(await worker.tick()).toEqual({ due: 1, claimed: 1, coalesced: 0, fired: 1, skipped: 0 });
    await worker.executor.settled();
  });

  it('a failed run puts an item in the runAs user’s inbox with the scheduler, correlationId and log path', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await apply(t.rt, {
      '_vance/recipes/bad.yaml': shellRecipe('exit 4'),
      '_vance/scheduler/a.yaml': doc('', undefined, 'bad'),
    });
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    await worker.executor.settled();
    const [run] = await t.rt.repos.runs.listForScheduler(T, P, 'a', 1);
    const items = await t.rt.repos.inbox.list(T, 'alice', { limit: 10 });
    expect(items.map((i) => [i.kind, i.title, i.scheduler, i.correlationId, i.logPath])).toEqual([
      ['run-failed', 'a failed: exit code 4', 'a', run?.correlationId, run?.logPath],
    ]);
  });

  it('a one-shot that starts later than the misfire threshold tells its user how late (spec §12)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    await apply(t.rt, {
      '_vance/recipes/ok.yaml': shellRecipe('true'),
      '_vance/scheduler/once.yaml': 'description: once\nat: "2026-06-01T08:30:00Z"\nrecipe: ok\n',
    });
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T09:15:00Z'));
    expect(await worker.tick()).toMatchObject({ fired: 1 });
    await worker.executor.settled();
    const items = await t.rt.repos.inbox.list(T, 'alice', { limit: 10 });
    expect(items.map((i) => [i.kind, i.title])).toEqual([['one-shot-late', 'once ran 45 minutes late']]);
    // Spawned, it left the scheduler prefix for the trash (spec §10a).
    expect(
      await t.rt.repos.documents.get({ tenant: T, project: P, path: '_vance/scheduler/once.yaml' }),
    ).toBeUndefined();
  });

  it('an engine reports paused and running, and the process status follows (spec §5)', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
    const engine = controlledEngine();
    t.rt.engines.register(engine);
    await apply(t.rt, {
      '_vance/recipes/held.yaml': 'description: held\nengine: held\n',
      '_vance/scheduler/a.yaml': doc('', undefined, 'held'),
    });
    const worker = t.worker();
    await worker.bootstrap();
    const started = engine.started();
    t.clock.set(Date.parse('2026-06-01T08:00:10Z'));
    await worker.tick();
    const held = await started;
    const status = async () => (await t?.rt.repos.processes.get(held.request.processId))?.status;
    await until(async () => (await status()) === 'running', 'running');
    held.request.report?.('paused');
    await until(async () => (await status()) === 'paused', 'paused');
    held.request.report?.('running');
    await until(async () => (await status()) === 'running', 'running again');
    held.finish();
    await worker.executor.settled();
    expect(await status()).toBe('done');
  });
});
