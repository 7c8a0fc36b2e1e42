import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimRun, type Run } from '../../src/runs/index.js';
import { openStore, type Repositories, repositories } from '../../src/store/index.js';
import { ursa } from '../support/cli.js';

const T = 'default';
const P = 'demo';
const at = (iso: string) => Date.parse(iso);
const log = (trace: string) => `_vance/logs/scheduler/heartbeat/${trace}.md`;

/** A temp folder with ./data/ursa.db (the default store), filled through the repositories. */
async function storeIn(fill: (repos: Repositories) => Promise<void>): Promise<string> {
  const cwd = mkdtempSync(join(tmpdir(), 'ursa-history-'));
  const store = await openStore(join(cwd, 'data', 'ursa.db'));
  try {
    await fill(repositories(store));
  } finally {
    await store.close();
  }
  return cwd;
}

/** A run of scheduler `heartbeat` as the runs table holds it, claimed at its occurrence. */
function run(correlationId: string, scheduledFor: string, fields: Record<string, unknown> = {}): Run {
  const claimed = claimRun({
    correlationId,
    tenant: T,
    project: P,
    name: 'heartbeat',
    scheduledFor: at(scheduledFor),
    trigger: 'cron',
    coalescedUntil: null,
    claimedAt: at(scheduledFor),
    runAs: 'admin',
    logPath: log(correlationId),
    workerId: null,
    lockMode: 'full',
  });
  return { ...claimed, ...fields } as Run;
}

// issue #23: `ursa runs` lists the runs table by occurrence, queued runs included, with each run's
// state and its links to the runs of its lane; `ursa inbox` the inbox (decisions §2).
describe('ursa runs', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await storeIn(async ({ runs }) => {
      const started = (id: string, startedAt: string, fields: Record<string, unknown> = {}) => ({
        state: 'started' as const,
        startedAt: at(startedAt),
        processId: `proc_${id}`,
        sessionId: 'sess_1',
        attempt: 1,
        ...fields,
      });
      await runs.insert(
        run('run_1', '2026-03-28T10:00:00Z', {
          ...started('run_1', '2026-03-28T10:00:00Z'),
          state: 'ended',
          outcome: 'completed',
          endedAt: at('2026-03-28T10:00:11.234Z'),
        }),
      );
      await runs.insert(
        run('run_2', '2026-03-28T10:00:10Z', {
          ...started('run_2', '2026-03-28T10:00:15Z'),
          coalesced: true,
          coalescedUntil: at('2026-03-28T10:00:12Z'),
          state: 'ended',
          outcome: 'failed',
          reason: 'exit code 1',
          endedAt: at('2026-03-28T10:00:15.056Z'),
        }),
      );
      // run_3 waited behind run_2 and runs; run_4 waits behind it; a manual fire was folded into run_4.
      await runs.insert(
        run('run_3', '2026-03-28T10:00:20Z', {
          ...started('run_3', '2026-03-28T10:00:30Z'),
          queuedAt: at('2026-03-28T10:00:20Z'),
          waitingBehind: 'run_2',
        }),
      );
      await runs.insert(
        run('run_4', '2026-03-28T10:00:40Z', {
          state: 'queued',
          queuedAt: at('2026-03-28T10:00:40Z'),
          waitingBehind: 'run_3',
        }),
      );
      await runs.insert(
        run('run_5', '2026-03-28T10:00:45.5Z', {
          trigger: 'manual',
          state: 'skipped',
          outcome: 'skipped_overlap_queued',
          reason: 'overlap',
          endedAt: at('2026-03-28T10:00:45.5Z'),
          foldedInto: 'run_4',
        }),
      );
    });
  });

  it('prints aligned columns by occurrence, with the state, the coalesced marker and the lane links', async () => {
    const listed = await ursa(['runs', 'heartbeat'], { cwd });
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe('');
    expect(listed.stdout).toBe(
      [
        'OCCURRENCE                STATE    OUTCOME                 DURATION  TRIGGER             LANE                               RUN LOG',
        `2026-03-28T10:00:45.500Z  skipped  skipped_overlap_queued            manual              folded into run_4                  ${log('run_5')}`,
        `2026-03-28T10:00:40Z      queued                                     cron                waiting behind run_3, 1 folded in  ${log('run_4')}`,
        `2026-03-28T10:00:20Z      running                                    cron                waited behind run_2                ${log('run_3')}`,
        `2026-03-28T10:00:10Z      ended    failed                     56 ms  cron     coalesced                                     ${log('run_2')}`,
        `2026-03-28T10:00:00Z      ended    completed               11234 ms  cron                                                   ${log('run_1')}`,
        '',
      ].join('\n'),
    );
  });

  it('pages with -n and --before, and says where the next page starts', async () => {
    const first = await ursa(['runs', 'heartbeat', '-n', '2'], { cwd });
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 3).map((l) => l.slice(0, 24).trim())).toEqual([
      'OCCURRENCE',
      '2026-03-28T10:00:45.500Z',
      '2026-03-28T10:00:40Z',
    ]);
    // The cursor is the occurrence of the page's last run, in UTC ms.
    expect(lines[3]).toBe(`next page: --before ${at('2026-03-28T10:00:40Z')}`);
    const second = await ursa(
      ['runs', 'heartbeat', '-n', '2', '--before', String(at('2026-03-28T10:00:40Z'))],
      {
        cwd,
      },
    );
    expect(second.stdout.split('\n').map((l) => l.slice(0, 20))).toEqual([
      'OCCURRENCE          ',
      '2026-03-28T10:00:20Z',
      '2026-03-28T10:00:10Z',
      `next page: --before ${at('2026-03-28T10:00:10Z')}`.slice(0, 20),
      '',
    ]);
    expect((await ursa(['runs', 'heartbeat', '--before', '1'], { cwd })).stdout).toBe(
      'no older runs of "heartbeat" in default/demo\n',
    );
    expect((await ursa(['runs', 'nothing'], { cwd })).stdout).toBe('no runs of "nothing" in default/demo\n');
    expect((await ursa(['runs', 'heartbeat', '--project', 'other'], { cwd })).stdout).toBe(
      'no runs of "heartbeat" in default/other\n',
    );
  });

  it('--json prints each run as the REST contract has it, and the next cursor on stderr', async () => {
    const listed = await ursa(['runs', 'heartbeat', '--json', '-n', '3'], { cwd });
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe(`next page: --before ${at('2026-03-28T10:00:20Z')}\n`);
    const runs = JSON.parse(listed.stdout);
    expect(runs.map((r: { correlationId: string }) => r.correlationId)).toEqual(['run_5', 'run_4', 'run_3']);
    expect(runs[1]).toEqual({
      correlationId: 'run_4',
      scheduler: 'heartbeat',
      trigger: 'cron',
      scheduledFor: '2026-03-28T10:00:40Z',
      state: 'queued',
      startedAt: null,
      endedAt: null,
      outcome: 'pending',
      durationMs: null,
      coalesced: false,
      coalescedUntil: null,
      reason: null,
      attempt: 0,
      processId: null,
      sessionId: null,
      logPath: log('run_4'),
      queuedAt: '2026-03-28T10:00:40Z',
      waitingBehind: 'run_3',
      foldedInto: null,
      folded: { count: 1, first: ['run_5'] },
    });
    expect(runs[0]).toMatchObject({ state: 'skipped', foldedInto: 'run_4', folded: null });
    // A started run with no process row reads as running.
    expect(runs[2]).toMatchObject({
      state: 'running',
      waitingBehind: 'run_2',
      startedAt: '2026-03-28T10:00:30Z',
    });
    expect((await ursa(['runs', 'nothing', '--json'], { cwd })).stdout).toBe('[]\n');
  });

  it('refuses a count or cursor that is not a whole number', async () => {
    for (const args of [
      ['-n', '0'],
      ['-n', 'ten'],
      ['-n', '1001'],
      ['--before', 'abc'],
      ['--before', '0'],
    ]) {
      const refused = await ursa(['runs', 'heartbeat', ...args], { cwd });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('[ARGUMENT_INVALID]');
    }
  });
});

describe('ursa inbox', () => {
  const created = '2026-03-28T11:00:00Z';
  let cwd: string;
  beforeEach(async () => {
    cwd = await storeIn(async ({ inbox }) => {
      await inbox.add({
        tenant: T,
        user: 'admin',
        kind: 'document-invalid',
        title: 'heartbeat.yaml is invalid',
        body: 'cron: "61 * * * * *": second must be 0-59\nextra: unknown field',
        project: P,
        scheduler: 'heartbeat',
        createdAt: at(created),
      });
      await inbox.add({
        tenant: T,
        user: 'admin',
        kind: 'run-failed',
        title: 'heartbeat failed',
        body: 'exit code 1',
        project: P,
        scheduler: 'heartbeat',
        correlationId: 'run_3',
        logPath: log('run_3'),
        createdAt: at(created) + 60_000,
      });
      await inbox.add({
        tenant: T,
        user: 'bob',
        kind: 'one-shot-late',
        title: 'briefing ran 42 minutes late',
        body: 'scheduled 2026-03-28T08:00:00Z',
        createdAt: at(created) + 120_000,
      });
      await inbox.add({
        tenant: 'other',
        user: 'admin',
        kind: 'run-failed',
        title: 'x',
        body: 'y',
        createdAt: 1,
      });
    });
  });

  it('lists, marks read and lists again, one user and tenant at a time', async () => {
    const list = await ursa(['inbox'], { cwd });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      [
        '2  2026-03-28T11:01:00Z  run-failed        unread  heartbeat failed',
        '    exit code 1',
        `    log: ${log('run_3')}`,
        '1  2026-03-28T11:00:00Z  document-invalid  unread  heartbeat.yaml is invalid',
        '    cron: "61 * * * * *": second must be 0-59',
        '    extra: unknown field',
        '',
      ].join('\n'),
    );
    const bob = await ursa(['inbox', '--user', 'bob', '--json'], { cwd });
    expect(JSON.parse(bob.stdout)).toEqual([
      {
        id: 3,
        user: 'bob',
        kind: 'one-shot-late',
        title: 'briefing ran 42 minutes late',
        body: 'scheduled 2026-03-28T08:00:00Z',
        project: null,
        scheduler: null,
        correlationId: null,
        logPath: null,
        createdAt: '2026-03-28T11:02:00Z',
        readAt: null,
      },
    ]);

    // Bob's item 3 is not admin's to mark.
    const read = await ursa(['inbox', 'read', '2', '3'], { cwd, now: '2026-03-28T12:30:00Z' });
    expect(read.code).toBe(0);
    expect(read.stdout).toBe(
      'marked read: 1 of 2 (the others are read already or not items of admin in default)\n',
    );
    expect((await ursa(['inbox', '-n', '5'], { cwd })).stdout.split('\n')[0]).toBe(
      '1  2026-03-28T11:00:00Z  document-invalid  unread  heartbeat.yaml is invalid',
    );
    const all = await ursa(['inbox', '--all', '--json'], { cwd });
    expect(
      JSON.parse(all.stdout).map((i: { id: number; readAt: string | null }) => [i.id, i.readAt]),
    ).toEqual([
      [2, '2026-03-28T12:30:00Z'],
      [1, null],
    ]);
    expect((await ursa(['inbox', 'read', '1', '--user', 'admin'], { cwd })).stdout).toBe('marked read: 1\n');
    expect((await ursa(['inbox'], { cwd })).stdout).toBe('no unread items for admin in default\n');
    expect((await ursa(['inbox', '--user', 'bob'], { cwd })).stdout).toContain('3  2026-03-28T11:02:00Z');
    expect((await ursa(['inbox', 'read', '3', '--user', 'bob'], { cwd })).stdout).toBe('marked read: 1\n');
    expect((await ursa(['inbox', '--tenant', 'other'], { cwd })).stdout).toBe(
      '4  1970-01-01T00:00:00.001Z  run-failed  unread  x\n    y\n',
    );
  });

  it('pages with -n and --before, the cursor on stderr with --json', async () => {
    const first = await ursa(['inbox', '--all', '-n', '1', '--json'], { cwd });
    expect(JSON.parse(first.stdout).map((i: { id: number }) => i.id)).toEqual([2]);
    expect(first.stderr).toBe('next page: --before 2\n');
    const second = await ursa(['inbox', '--all', '-n', '1', '--before', '2'], { cwd });
    expect(second.stdout.split('\n')[0]).toBe(
      '1  2026-03-28T11:00:00Z  document-invalid  unread  heartbeat.yaml is invalid',
    );
    expect(second.stdout).not.toContain('next page');
    expect((await ursa(['inbox', '--all', '--before', '1'], { cwd })).stdout).toBe(
      'no older items for admin in default\n',
    );
  });

  it('refuses an id that is not a whole number', async () => {
    const run = await ursa(['inbox', 'read', '1', 'x'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('ursa: id: "x" is not an id [ARGUMENT_INVALID]\n  allowed: a whole number ≥ 1\n');
  });
});
