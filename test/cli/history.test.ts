import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FeedLine, openStore, type Repositories, repositories } from '../../src/store/index.js';
import { ursa } from '../support/cli.js';

const T = 'default';
const P = 'demo';
const at = (iso: string) => Date.parse(iso);
const log = (trace: string) => `_vance/logs/scheduler/heartbeat/${trace}.md`;

/** A feed line of scheduler `heartbeat` as the executor writes it. */
function line(
  kind: FeedLine['kind'],
  trace: string,
  when: string,
  outcome: string,
  payload: Record<string, unknown>,
): Omit<FeedLine, 'id'> {
  return {
    tenant: T,
    project: P,
    at: at(when),
    kind,
    refType: 'SCHEDULER',
    refId: 'heartbeat',
    traceId: trace,
    outcome,
    logPath: log(trace),
    payload: { trigger: 'cron', coalesced: false, coalescedUntil: null, ...payload },
  };
}

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

// issue #5: `ursa runs` reads the activity feed (spec §7); `ursa inbox` the inbox (decisions §2).
describe('ursa runs', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await storeIn(async ({ feed }) => {
      const s1 = at('2026-03-28T10:00:00Z');
      await feed.append(
        line('START', 'run_1', '2026-03-28T10:00:00Z', 'pending', {
          scheduledFor: s1,
          processId: 'proc_1',
          sessionId: 'sess_1',
          runAs: 'admin',
        }),
      );
      await feed.append(
        line('SKIPPED', 'run_2', '2026-03-28T10:00:10Z', 'skipped_overlap', {
          scheduledFor: at('2026-03-28T10:00:10Z'),
          reason: 'overlap',
        }),
      );
      await feed.append(
        line('END', 'run_1', '2026-03-28T10:00:11.234Z', 'completed', {
          scheduledFor: s1,
          processId: 'proc_1',
          durationMs: 11_234,
          exitCode: 0,
          reason: null,
        }),
      );
      const coalesced = {
        scheduledFor: at('2026-03-28T10:00:20Z'),
        coalesced: true,
        coalescedUntil: at('2026-03-28T10:04:50Z'),
      };
      await feed.append(
        line('START', 'run_3', '2026-03-28T10:05:00Z', 'pending', {
          ...coalesced,
          processId: 'proc_3',
          sessionId: 'sess_1',
          runAs: 'admin',
        }),
      );
      await feed.append(
        line('END', 'run_3', '2026-03-28T10:05:00.056Z', 'failed', {
          ...coalesced,
          processId: 'proc_3',
          durationMs: 56,
          exitCode: 1,
          reason: 'exit code 1',
        }),
      );
      await feed.append(
        line('START', 'run_4', '2026-03-28T10:06:00Z', 'pending', {
          scheduledFor: at('2026-03-28T10:06:00Z'),
          processId: 'proc_4',
          sessionId: 'sess_1',
          runAs: 'admin',
        }),
      );
    });
  });

  it('prints aligned columns, newest first, with the coalesced marker in its own column', async () => {
    const run = await ursa(['runs', 'heartbeat'], { cwd });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        `2026-03-28T10:06:00Z  pending                    cron             ${log('run_4')}`,
        `2026-03-28T10:00:20Z  failed              56 ms  cron  coalesced  ${log('run_3')}`,
        `2026-03-28T10:00:10Z  skipped_overlap            cron             ${log('run_2')}`,
        `2026-03-28T10:00:00Z  completed        11234 ms  cron             ${log('run_1')}`,
        '',
      ].join('\n'),
    );
  });

  it('pages with -n and --before, and says where the next page starts', async () => {
    const first = await ursa(['runs', 'heartbeat', '-n', '2'], { cwd });
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2).map((l) => l.slice(0, 20))).toEqual([
      '2026-03-28T10:06:00Z',
      '2026-03-28T10:00:20Z',
    ]);
    // The cursor is the START line of the page's oldest run: run_3's is the 4th line of the feed.
    expect(lines[2]).toBe('next page: --before 4');
    const second = await ursa(['runs', 'heartbeat', '-n', '2', '--before', '4'], { cwd });
    expect(second.stdout).toBe(
      [
        `2026-03-28T10:00:10Z  skipped_overlap            cron  ${log('run_2')}`,
        `2026-03-28T10:00:00Z  completed        11234 ms  cron  ${log('run_1')}`,
        '',
      ].join('\n'),
    );
    expect((await ursa(['runs', 'heartbeat', '--before', '1'], { cwd })).stdout).toBe(
      'no older runs of "heartbeat" in default/demo\n',
    );
    expect((await ursa(['runs', 'nothing'], { cwd })).stdout).toBe('no runs of "nothing" in default/demo\n');
    expect((await ursa(['runs', 'heartbeat', '--project', 'other'], { cwd })).stdout).toBe(
      'no runs of "heartbeat" in default/other\n',
    );
  });

  it('--json prints the JSON array scripts already read, and the next cursor on stderr', async () => {
    const run = await ursa(['runs', 'heartbeat', '--json', '-n', '3'], { cwd });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('next page: --before 2\n');
    expect(JSON.parse(run.stdout)).toEqual([
      {
        correlationId: 'run_4',
        scheduler: 'heartbeat',
        trigger: 'cron',
        scheduledFor: '2026-03-28T10:06:00Z',
        startedAt: '2026-03-28T10:06:00Z',
        endedAt: null,
        durationMs: null,
        outcome: 'pending',
        reason: null,
        coalesced: false,
        coalescedUntil: null,
        processId: 'proc_4',
        sessionId: 'sess_1',
        logPath: log('run_4'),
      },
      {
        correlationId: 'run_3',
        scheduler: 'heartbeat',
        trigger: 'cron',
        scheduledFor: '2026-03-28T10:00:20Z',
        startedAt: '2026-03-28T10:05:00Z',
        endedAt: '2026-03-28T10:05:00.056Z',
        durationMs: 56,
        outcome: 'failed',
        reason: 'exit code 1',
        coalesced: true,
        coalescedUntil: '2026-03-28T10:04:50Z',
        processId: 'proc_3',
        sessionId: 'sess_1',
        logPath: log('run_3'),
      },
      {
        correlationId: 'run_2',
        scheduler: 'heartbeat',
        trigger: 'cron',
        scheduledFor: '2026-03-28T10:00:10Z',
        startedAt: null,
        endedAt: null,
        durationMs: null,
        outcome: 'skipped_overlap',
        reason: 'overlap',
        coalesced: false,
        coalescedUntil: null,
        processId: null,
        sessionId: null,
        logPath: log('run_2'),
      },
    ]);
    const rest = await ursa(['runs', 'heartbeat', '--json', '-n', '3', '--before', '2'], { cwd });
    expect(rest.stderr).toBe('');
    expect(JSON.parse(rest.stdout)).toEqual([
      expect.objectContaining({
        correlationId: 'run_1',
        startedAt: '2026-03-28T10:00:00Z',
        endedAt: '2026-03-28T10:00:11.234Z',
        durationMs: 11_234,
        outcome: 'completed',
      }),
    ]);
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
      const run = await ursa(['runs', 'heartbeat', ...args], { cwd });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('[ARGUMENT_INVALID]');
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
