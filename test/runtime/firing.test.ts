import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { StoreDialect } from '../../src/store/index.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const P = 'ops';
let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function frontMatter(markdown: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(markdown);
  if (match === null) throw new Error(`no front matter in:\n${markdown}`);
  return parseYaml(match[1] as string) as Record<string, unknown>;
}

async function setup(dialect: StoreDialect, files: Record<string, string>, start = '2026-06-01T08:00:00Z') {
  t = await testRuntime(start, { dialect });
  const entries = await applyDirectory(t.rt, projectFolder(files), T, P, libraryActor('alice'));
  const worker = t.worker();
  await worker.bootstrap();
  return { t, worker, entries };
}

async function tickAt(worker: Worker, at: string) {
  (t as TestRuntime).clock.set(Date.parse(at));
  const result = await worker.tick();
  await worker.executor.settled();
  return result;
}

// spec §4.1, §6, §7, §9a; decisions §4: a document goes in, fires on time, and leaves its traces.
describe.each(DIALECTS)('firing a shell recipe end to end on %s', (dialect) => {
  it('fires on its second, runs the process in the system session, writes START/END lines and the run log', async () => {
    const { worker } = await setup(dialect, {
      '_vance/recipes/echo.yaml': shellRecipe('echo "hello $URSA_PARAM_WHO"', { who: 'world' }),
      '_vance/scheduler/greet.yaml': cronScheduler('*/10 * * * * *', 'echo', 'params:\n  who: Ursa\n'),
    });
    const rt = (t as TestRuntime).rt;
    expect(await tickAt(worker, '2026-06-01T08:00:09.999Z')).toEqual({
      due: 0,
      claimed: 0,
      coalesced: 0,
      fired: 0,
      skipped: 0,
    });
    expect(await tickAt(worker, '2026-06-01T08:00:10.002Z')).toEqual({
      due: 1,
      claimed: 1,
      coalesced: 0,
      fired: 1,
      skipped: 0,
    });

    const [run] = await rt.repos.runs.listForScheduler(T, P, 'greet', 10);
    expect(run).toMatchObject({
      scheduledFor: Date.parse('2026-06-01T08:00:10Z'),
      trigger: 'cron',
      state: 'ended',
      outcome: 'completed',
      coalesced: false,
      runAs: 'alice',
    });
    expect(run?.correlationId).toMatch(/^run_[0-9a-f-]{36}$/);
    expect(run?.logPath).toBe(`_vance/logs/scheduler/greet/20260601T080010Z-${run?.correlationId}.md`);

    const session = await rt.repos.sessions.get(run?.sessionId as string);
    expect(session).toMatchObject({
      name: '_ursascheduler_greet',
      system: true,
      ownerUser: 'alice',
      status: 'idle',
    });
    const process = await rt.repos.processes.get(run?.processId as string);
    expect(process).toMatchObject({
      status: 'done',
      recipe: 'echo',
      engine: 'shell',
      ownerUser: 'alice',
      exitCode: 0,
      outputTail: 'hello Ursa\n',
      triggerOrigin: {
        source: 'ursascheduler:greet',
        scheduledFor: Date.parse('2026-06-01T08:00:10Z'),
        correlationId: run?.correlationId,
        trigger: 'cron',
      },
    });

    const feed = await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'greet', 10);
    expect(feed.map((l) => [l.kind, l.outcome, l.traceId, l.logPath])).toEqual([
      ['END', 'completed', run?.correlationId, run?.logPath],
      ['START', 'pending', run?.correlationId, run?.logPath],
    ]);

    const log = await rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath as string });
    expect(frontMatter(log?.body as string)).toMatchObject({
      kind: 'scheduler-log',
      scheduler: 'greet',
      correlationId: run?.correlationId,
      trigger: 'cron',
      scheduledFor: '2026-06-01T08:00:10Z',
      outcome: 'completed',
      runAs: 'alice',
      processId: run?.processId,
      sessionId: run?.sessionId,
      exitCode: 0,
    });
    expect(log?.body).toContain('TRIGGERED  source=ursascheduler:greet');
    expect(log?.body).toContain('TERMINATED outcome=completed');
    expect(log?.body).toContain('hello Ursa');
    // Run logs expire after the retention (default 7 days, spec §9a).
    expect(log?.expiresAt).toBe(Date.parse('2026-06-01T08:00:10.002Z') + 7 * 86_400_000);
    // The next occurrence is the one after, and reusing the session does not create another.
    expect((await rt.repos.schedules.get({ tenant: T, project: P, name: 'greet' }))?.nextRunAt).toBe(
      Date.parse('2026-06-01T08:00:20Z'),
    );
    await tickAt(worker, '2026-06-01T08:00:20Z');
    const runs = await rt.repos.runs.listForScheduler(T, P, 'greet', 10);
    expect(runs).toHaveLength(2);
    expect(runs[0]?.sessionId).toBe(run?.sessionId);
  });

  it('gives outcome failed with the exit code when the command fails', async () => {
    const { worker } = await setup(dialect, {
      '_vance/recipes/broken.yaml': shellRecipe('echo "it broke" >&2; exit 3'),
      '_vance/scheduler/broken.yaml': cronScheduler('0 * * * * *', 'broken'),
    });
    const rt = (t as TestRuntime).rt;
    await tickAt(worker, '2026-06-01T08:01:00Z');
    const [run] = await rt.repos.runs.listForScheduler(T, P, 'broken', 10);
    expect(run).toMatchObject({ outcome: 'failed', reason: 'exit code 3' });
    expect(await rt.repos.processes.get(run?.processId as string)).toMatchObject({
      status: 'failed',
      exitCode: 3,
      errorTail: 'it broke\n',
    });
    const [end] = await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'broken', 1);
    expect(end).toMatchObject({
      kind: 'END',
      outcome: 'failed',
      payload: { exitCode: 3, reason: 'exit code 3' },
    });
    const log = (await rt.repos.documents.get({ tenant: T, project: P, path: run?.logPath as string }))
      ?.body as string;
    expect(frontMatter(log)).toMatchObject({ outcome: 'failed', exitCode: 3, reason: 'exit code 3' });
    expect(log).toContain('it broke');
  });

  it('refuses each broken document with its field path, and the valid one beside them still fires', async () => {
    const { worker, entries } = await setup(dialect, {
      '_vance/recipes/echo.yaml': shellRecipe('echo ok'),
      '_vance/scheduler/good.yaml': cronScheduler('0 * * * * *', 'echo'),
      '_vance/scheduler/both.yaml':
        'description: d\ncron: "0 * * * * *"\nat: "2026-06-01T09:00:00Z"\nrecipe: echo\n',
      '_vance/scheduler/neither.yaml': 'description: d\nrecipe: echo\n',
      '_vance/scheduler/no-recipe.yaml': cronScheduler('0 * * * * *', 'nosuch'),
      '_vance/scheduler/bad-zone.yaml':
        'description: d\ncron: "0 * * * * *"\ntimezone: Mars/Olympus\nrecipe: echo\n',
      '_vance/scheduler/bad-cron.yaml': cronScheduler('0 0 9 * * MON#6', 'echo'),
      '_vance/scheduler/types.yaml':
        'description: d\ncron: "0 * * * * *"\nrecipe: echo\nenabled: "yes"\ntags: daily\n',
      '_vance/scheduler/unknown.yaml': `${cronScheduler('0 * * * * *', 'echo')}colour: blue\n`,
    });
    const invalid = Object.fromEntries(
      entries
        .filter((e) => e.status === 'invalid')
        .map((e) => [e.path.replace('_vance/scheduler/', ''), (e.issues ?? []).map((i) => i.path)]),
    );
    expect(invalid).toEqual({
      'bad-cron.yaml': ['cron'],
      'bad-zone.yaml': ['timezone'],
      'both.yaml': [expect.stringMatching(/^(cron|at|)$/)],
      'neither.yaml': [expect.stringMatching(/^(cron|at|)$/)],
      'no-recipe.yaml': ['recipe'],
      'types.yaml': ['enabled', 'tags'],
      'unknown.yaml': ['colour'],
    });
    const messages = entries.filter((e) => e.status === 'invalid').map((e) => e.message ?? '');
    for (const message of messages) expect(message).toMatch(/_vance\/scheduler\/[a-z-]+\.yaml/);
    expect(entries.filter((e) => e.status === 'created').map((e) => e.path)).toEqual([
      '_vance/recipes/echo.yaml',
      '_vance/scheduler/good.yaml',
    ]);
    expect(await tickAt(worker, '2026-06-01T08:01:00Z')).toMatchObject({ claimed: 1, fired: 1 });
    expect((await (t as TestRuntime).rt.repos.runs.listForScheduler(T, P, 'good', 5))[0]?.outcome).toBe(
      'completed',
    );
  });
});

// decisions §4 and issue #3: a restart after two minutes produces one coalesced catch-up run, not twelve.
describe.each(DIALECTS)('catch-up after downtime on %s (decisions §4)', (dialect) => {
  it('runs a heartbeat that missed twelve occurrences once, and says it was coalesced', async () => {
    const first = await setup(dialect, {
      '_vance/recipes/beat.yaml': shellRecipe('echo beat'),
      '_vance/scheduler/heartbeat.yaml': cronScheduler('*/10 * * * * *', 'beat'),
    });
    const before = first.t;
    await tickAt(first.worker, '2026-06-01T08:00:10Z');

    // Ursa is down from 08:00:10 to 08:02:15; a new process opens the same database.
    before.clock.set(Date.parse('2026-06-01T08:02:15Z'));
    const rt = await before.peer();
    const worker = before.worker({}, rt);
    await worker.bootstrap();
    expect(await worker.tick()).toEqual({ due: 1, claimed: 1, coalesced: 1, fired: 1, skipped: 0 });
    await worker.executor.settled();
    expect(await worker.tick()).toEqual({ due: 0, claimed: 0, coalesced: 0, fired: 0, skipped: 0 });

    const runs = await rt.repos.runs.listForScheduler(T, P, 'heartbeat', 50);
    expect(runs.map((r) => [iso(r.scheduledFor), r.outcome, r.coalesced])).toEqual([
      ['2026-06-01T08:00:20Z', 'completed', true],
      ['2026-06-01T08:00:10Z', 'completed', false],
    ]);
    const catchUp = runs[0];
    expect(iso(catchUp?.coalescedUntil as number)).toBe('2026-06-01T08:02:10Z');
    const [end] = await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'heartbeat', 1);
    expect(end).toMatchObject({
      kind: 'END',
      traceId: catchUp?.correlationId,
      payload: { coalesced: true, coalescedUntil: Date.parse('2026-06-01T08:02:10Z') },
    });
    const log = (await rt.repos.documents.get({ tenant: T, project: P, path: catchUp?.logPath as string }))
      ?.body as string;
    expect(frontMatter(log)).toMatchObject({
      coalesced: true,
      coalescedUntil: '2026-06-01T08:02:10Z',
      scheduledFor: '2026-06-01T08:00:20Z',
    });
    expect(log).toContain('were already due and were absorbed into it');
    expect((await rt.repos.schedules.get({ tenant: T, project: P, name: 'heartbeat' }))?.nextRunAt).toBe(
      Date.parse('2026-06-01T08:02:20Z'),
    );
  });
});
