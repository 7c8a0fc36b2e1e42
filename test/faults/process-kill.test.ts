import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/fencing/lease.js';
import type { Runtime } from '../../src/runtime/context.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { iso } from '../support/cases.js';
import { DIALECTS } from '../support/dialects.js';
import { projectFolder, shellRecipe } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { until } from '../support/until.js';

const CHILD = resolve(import.meta.dirname, 'kill-child.mjs');
const T = 'acme';
const P = 'ops';
const DUE = Date.parse('2026-06-01T08:00:10Z');
const LEASE_MS = 5_000;

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

type Kill =
  | { readonly point: 'afterClaim' | 'afterSpawn' | 'afterMarker' | 'beforeEnd' }
  | { readonly table: string; readonly nth: number; readonly when: 'before' | 'after' };

/** Runs one worker pass at `DUE` in a child process that SIGKILLs itself at `kill`; resolves once it died. */
async function killedChild(location: string, kill: Kill): Promise<void> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify({ db: location, now: DUE, kill })], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  expect({ code, signal, stderr }, 'the child died at its fault point').toEqual({
    code: null,
    signal: 'SIGKILL',
    stderr: '',
  });
}

/**
 * A project whose scheduler `job` fires at 08:00:10 (every 10 s, or `at:` once) a shell recipe
 * that appends its correlation id to a file: each line is one real execution of the run.
 */
async function setup(dialect: (typeof DIALECTS)[number], oneShot: boolean) {
  t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  const out = join(mkdtempSync(join(tmpdir(), 'ursa-kill-')), 'executions');
  const when = oneShot ? 'at: "2026-06-01T08:00:10Z"' : 'cron: "*/10 * * * * *"';
  await applyDirectory(
    t.rt,
    projectFolder({
      '_vance/recipes/mark.yaml': shellRecipe('echo "$URSA_CORRELATION_ID" >> "$URSA_PARAM_OUT"', { out }),
      '_vance/scheduler/job.yaml': `description: killed\n${when}\ntimezone: UTC\nrecipe: mark\n`,
    }),
    T,
    P,
    libraryActor('alice'),
  );
  const executions = () => (existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean) : []);
  return { t, executions };
}

/**
 * The restart after the kill: a new worker on the same store once the dead one's lease and the
 * takeover margin lapsed (SQLite: at once, it is the only process, decisions §5), its bootstrap
 * recovers, one pass.
 */
async function restart(t: TestRuntime, dialect: (typeof DIALECTS)[number]): Promise<Runtime> {
  t.clock.set(DUE + LEASE_MS + TAKEOVER_MARGIN_MS + 1_000);
  const rt = await t.peer();
  const worker = t.worker({ acquireAheadMs: 0, leaseTtlMs: LEASE_MS, exclusive: dialect === 'sqlite' }, rt);
  await worker.bootstrap();
  await worker.tick();
  await worker.executor.settled();
  await worker.stop();
  return rt;
}

/** Everything the store holds about `job`'s runs, for the consistency checks. */
async function record(rt: Runtime) {
  const db = rt.repos.store.db;
  const runs = await db.selectFrom('runs').selectAll().execute();
  const lines = (await rt.repos.feed.listForRef(T, P, 'SCHEDULER', 'job', 100)).reverse();
  const processes = await db.selectFrom('processes').select(['id', 'status', 'reason']).execute();
  const logs = await db
    .selectFrom('documents')
    .select(['path', 'body'])
    .where('path', 'like', '_vance/logs/%')
    .execute();
  return {
    runs: runs.map((r) => [iso(Number(r.scheduled_for)), r.state, r.outcome, r.reason]),
    run: runs[0],
    lines: lines.map((l) => `${l.kind} ${l.outcome}`),
    traces: new Set(lines.map((l) => l.traceId)),
    processes: processes.map((p) => [p.status, p.reason]),
    logOutcomes: logs.map((l) => /outcome: (\w+)/.exec(l.body)?.[1]),
  };
}

// issue #12, spec §9a, decisions §4: a worker killed with SIGKILL at an exact point; the restart
// finds a consistent store and nothing runs twice.
describe.each(DIALECTS)('SIGKILL at an exact point, then a restart, on %s (issue #12)', (dialect) => {
  it('inside the claim transaction (its run inserted, not committed): nothing was claimed; the restart claims it once', async () => {
    const { t, executions } = await setup(dialect, false);
    await killedChild(t.location, { table: 'runs', nth: 1, when: 'after' });
    const state = await t.rt.repos.schedules.get({ tenant: T, project: P, name: 'job' });
    expect(iso(state?.nextRunAt as number)).toBe('2026-06-01T08:00:10Z');
    expect((await record(t.rt)).runs).toEqual([]);

    const rt = await restart(t, dialect);
    const after = await record(rt);
    expect(after.runs).toEqual([['2026-06-01T08:00:10Z', 'ended', 'completed', null]]);
    expect(after.lines).toEqual(['START pending', 'END completed']);
    expect(after.logOutcomes).toEqual(['completed']);
    expect(executions()).toEqual([after.run?.correlation_id]);
  });

  it('right after the claim committed, before the dispatch: the restart starts the claimed run once', async () => {
    const { t, executions } = await setup(dialect, false);
    await killedChild(t.location, { point: 'afterClaim' });
    expect((await record(t.rt)).runs).toEqual([['2026-06-01T08:00:10Z', 'claimed', 'pending', null]]);

    const rt = await restart(t, dialect);
    const after = await record(rt);
    expect(after.runs).toEqual([['2026-06-01T08:00:10Z', 'ended', 'completed', null]]);
    expect(after.lines).toEqual(['START pending', 'END completed']);
    expect(executions()).toEqual([after.run?.correlation_id]);
  });

  it('before the first run-log write (START written, log not yet): the restart ends it worker-lost, never runs it again', async () => {
    const { t, executions } = await setup(dialect, false);
    await killedChild(t.location, { table: 'documents', nth: 1, when: 'before' });
    const killed = await record(t.rt);
    expect(killed.runs).toEqual([['2026-06-01T08:00:10Z', 'started', 'pending', null]]);
    // The feed carries the trace (spec §9a): the START line is there, the run log is not.
    expect(killed.lines).toEqual(['START pending']);
    expect(killed.logOutcomes).toEqual([]);
    await until(() => executions().length === 1, 'the process the dead worker started');

    const rt = await restart(t, dialect);
    const after = await record(rt);
    expect(after.runs).toEqual([['2026-06-01T08:00:10Z', 'ended', 'failed', 'worker-lost']]);
    expect(after.lines).toEqual(['START pending', 'END failed']);
    expect(after.processes).toEqual([['failed', 'worker-lost']]);
    expect(after.logOutcomes).toEqual(['failed']);
    expect(executions()).toEqual([after.run?.correlation_id]);
  });

  it('inside the end transaction, its END line written and not committed: the end is undone whole; the restart ends it worker-lost once', async () => {
    const { t, executions } = await setup(dialect, false);
    // The START line is the first feed row, the END line the second (inside the end transaction).
    await killedChild(t.location, { table: 'feed', nth: 2, when: 'after' });
    const killed = await record(t.rt);
    // Nothing of the end: the run is started, its END line absent, and its log pending (spec §9a)
    // or not written at all (a run whose engine returned before its start was recorded gets
    // only its final log, at its end).
    expect(killed.runs).toEqual([['2026-06-01T08:00:10Z', 'started', 'pending', null]]);
    expect(killed.lines).toEqual(['START pending']);
    expect(['', 'pending']).toContain(killed.logOutcomes.join());
    expect(killed.processes).toEqual([['running', null]]);

    const rt = await restart(t, dialect);
    const after = await record(rt);
    expect(after.runs).toEqual([['2026-06-01T08:00:10Z', 'ended', 'failed', 'worker-lost']]);
    expect(after.lines).toEqual(['START pending', 'END failed']);
    expect(after.logOutcomes).toEqual(['failed']);
    expect(after.traces.size).toBe(1);
    expect(executions()).toEqual([after.run?.correlation_id]);
  });

  for (const kill of [
    { point: 'afterSpawn' } as const,
    { table: 'document_archive', nth: 1, when: 'after' } as const,
  ]) {
    const where =
      'point' in kill
        ? 'after its spawn, before its fired marker'
        : 'inside its trash step, after the archive row';
    it(`a one-shot killed ${where}: never runs twice; the restart puts its document in the trash once`, async () => {
      const { t, executions } = await setup(dialect, true);
      await killedChild(t.location, kill);
      expect((await record(t.rt)).runs).toEqual([['2026-06-01T08:00:10Z', 'started', 'pending', null]]);
      // The document is still in place (the trash step never committed).
      const path = '_vance/scheduler/job.yaml';
      expect(await t.rt.repos.documents.get({ tenant: T, project: P, path })).toBeDefined();
      // Its bookkeeping follows the engine's entry (spec §10a: spawn, then the marker): killed at
      // either point, the dead worker had started its process (issue #20).
      await until(() => executions().length === 1, 'the process the dead worker started');

      const rt = await restart(t, dialect);
      const after = await record(rt);
      expect(after.runs).toEqual([['2026-06-01T08:00:10Z', 'ended', 'failed', 'worker-lost']]);
      expect(after.lines).toEqual(['START pending', 'END failed']);
      // Once, and never by the restart: a started one-shot is never started again (spec §10a).
      expect(executions()).toEqual([after.run?.correlation_id]);
      expect(await rt.repos.documents.get({ tenant: T, project: P, path })).toBeUndefined();
      const trash = await rt.repos.documents.list(T, P, '_vance/trash/');
      expect(trash.map((d) => d.path)).toEqual([expect.stringMatching(/_job\.yaml$/)]);
      const archived = await rt.repos.store.db
        .selectFrom('document_archive')
        .select('reason')
        .where('path', '=', path)
        .execute();
      expect(archived).toEqual([{ reason: 'trashed' }]);
      expect(await rt.repos.projects.hasFired(T, P, 'job', DUE)).toBe(true);
    });
  }
});
