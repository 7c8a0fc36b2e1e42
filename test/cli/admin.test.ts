import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, type Repositories, repositories } from '../../src/store/index.js';
import { ursa } from '../support/cli.js';
import { cronScheduler, projectFolder } from '../support/project.js';

const freshDir = () => mkdtempSync(join(tmpdir(), 'ursa-admin-'));

/** Runs `fn` on the store of `cwd` (the default ./data/ursa.db), closing it after. */
async function withRepos<T>(cwd: string, fn: (repos: Repositories) => Promise<T>): Promise<T> {
  const store = await openStore(join(cwd, 'data', 'ursa.db'));
  try {
    return await fn(repositories(store));
  } finally {
    await store.close();
  }
}

// issue #6: the administration commands, against a real SQLite file.
describe('ursa user', () => {
  it('adds users with an optional validated zone and lists them with the zone that applies', async () => {
    const cwd = freshDir();
    expect(await ursa(['user', 'add', 'alice', '--tz', 'europe/berlin'], { cwd })).toEqual({
      code: 0,
      stdout: 'added user alice to default (display time zone Europe/Berlin)\n',
      stderr: '',
    });
    expect((await ursa(['user', 'add', 'bob'], { cwd })).stdout).toBe('added user bob to default\n');

    const again = await ursa(['user', 'add', 'alice'], { cwd });
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      'ursa: name: user "alice" already exists in default [CONFLICT]\n' +
        '  allowed: a new user name (change a zone with: ursa settings set user alice display.timezone <zone>)\n',
    );
    const badName = await ursa(['user', 'add', '../x'], { cwd });
    expect([badName.code, badName.stderr.includes('[NAME_INVALID]')]).toEqual([2, true]);
    const badZone = await ursa(['user', 'add', 'carol', '--tz', 'Mars/Olympus'], { cwd });
    expect([badZone.code, badZone.stderr.split('\n')[0]]).toEqual([
      2,
      'ursa: timezone: "Mars/Olympus" is not an IANA time zone [ZONE_INVALID]',
    ]);

    expect((await ursa(['user', 'list'], { cwd })).stdout).toBe(
      'alice  Europe/Berlin  (profile of user alice)\nbob    UTC            (default)\n',
    );
    await ursa(['settings', 'set', 'tenant', '-', 'display.timezone', 'Asia/Tokyo'], { cwd });
    const listed = await ursa(['user', 'list', '--json'], { cwd });
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        name: 'alice',
        displayTimezone: 'Europe/Berlin',
        effectiveTimezone: 'Europe/Berlin',
        from: 'profile of user alice',
      },
      { name: 'bob', displayTimezone: null, effectiveTimezone: 'Asia/Tokyo', from: 'setting tenant' },
    ]);
    // Users belong to a tenant.
    expect((await ursa(['user', 'list', '--tenant', 'acme'], { cwd })).stdout).toBe('no users in acme\n');
  });
});

describe('ursa settings', () => {
  it('sets validated settings, resolves them through their cascades, lists and removes them', async () => {
    const cwd = freshDir();
    const run = (...args: string[]) => ursa(['settings', ...args], { cwd });
    expect(await run('set', 'project', 'ops', 'scheduler.log.retentionDays', '30')).toEqual({
      code: 0,
      stdout: 'project ops scheduler.log.retentionDays = 30\n',
      stderr: '',
    });
    expect((await run('set', 'project', '_tenant', 'scheduler.log.retentionDays', '-1')).stdout).toBe(
      'project _tenant scheduler.log.retentionDays = -1\n',
    );
    expect((await run('set', 'tenant', '-', 'feed.retentionDays', '30')).stdout).toBe(
      'tenant - feed.retentionDays = 30\n',
    );
    expect((await run('set', 'project', 'ops', 'lifecycleType', 'permanent')).stdout).toBe(
      'project ops lifecycleType = PERMANENT\n',
    );

    expect((await run('get', 'project', 'ops', 'scheduler.log.retentionDays')).stdout).toBe(
      '30  (setting project/ops)\n',
    );
    expect((await run('get', 'project', 'dev', 'scheduler.log.retentionDays')).stdout).toBe(
      '-1  (setting project/_tenant)\n',
    );
    expect(JSON.parse((await run('get', 'tenant', '-', 'feed.retentionDays', '--json')).stdout)).toEqual({
      scope: 'tenant',
      subject: '',
      key: 'feed.retentionDays',
      value: '30',
      from: 'setting tenant',
    });
    expect((await run('get', 'tenant', '-', 'display.timezone')).stdout).toBe('UTC  (default)\n');
    expect((await run('get', 'project', 'dev', 'lifecycleType')).stdout).toBe('NORMAL  (default)\n');

    expect((await run('list')).stdout).toBe(
      [
        'project  _tenant  scheduler.log.retentionDays  -1',
        'project  ops      lifecycleType                PERMANENT',
        'project  ops      scheduler.log.retentionDays  30',
        'tenant   -        feed.retentionDays           30',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await run('list', 'project', 'ops', '--json')).stdout)).toEqual([
      { scope: 'project', subject: 'ops', key: 'lifecycleType', value: 'PERMANENT' },
      { scope: 'project', subject: 'ops', key: 'scheduler.log.retentionDays', value: '30' },
    ]);
    expect(JSON.parse((await run('list', 'tenant', '-', '--json')).stdout)).toEqual([
      { scope: 'tenant', subject: '', key: 'feed.retentionDays', value: '30' },
    ]);

    expect((await run('unset', 'project', '_tenant', 'scheduler.log.retentionDays')).stdout).toBe(
      'removed project _tenant scheduler.log.retentionDays\n',
    );
    expect((await run('unset', 'project', '_tenant', 'scheduler.log.retentionDays')).stdout).toBe(
      'was not set: project _tenant scheduler.log.retentionDays\n',
    );
    // The operator fallback (ursa.yaml / URSA_RUN_LOG_RETENTION_DAYS, default 7) applies again.
    expect((await run('get', 'project', 'dev', 'scheduler.log.retentionDays')).stdout).toBe(
      '7  (operator config)\n',
    );
    expect(
      (
        await ursa(['settings', 'get', 'project', 'dev', 'scheduler.log.retentionDays'], {
          cwd,
          env: { URSA_RUN_LOG_RETENTION_DAYS: '3' },
        })
      ).stdout,
    ).toBe('3  (operator config)\n');
    expect((await run('list', '--tenant', 'acme')).stdout).toBe('no settings in acme\n');
  });

  it('refuses unknown keys, wrong scopes, bad values and unknown users, saying what is allowed', async () => {
    const cwd = freshDir();
    const run = (...args: string[]) => ursa(['settings', ...args], { cwd });
    expect(await run('set', 'project', 'ops', 'lifecycleType', 'FOREVER')).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ursa: value: "FOREVER" is not allowed for lifecycleType [ARGUMENT_INVALID]\n  allowed: NORMAL or PERMANENT\n',
    });
    expect((await run('set', 'tenant', '-', 'colour', 'blue')).stderr).toBe(
      'ursa: key: "colour" is not a setting Ursa knows [ARGUMENT_INVALID]\n' +
        '  allowed: display.timezone, scheduler.log.retentionDays, scheduler.budget.runsPerHour, scheduler.budget.runsPerDay, feed.retentionDays, lifecycleType\n',
    );
    expect((await run('set', 'tenant', '-', 'scheduler.log.retentionDays', '3')).stderr).toBe(
      'ursa: scope: scheduler.log.retentionDays cannot be set on tenant [ARGUMENT_INVALID]\n  allowed: project\n',
    );
    const unknownUser = await run('set', 'user', 'nobody', 'display.timezone', 'UTC');
    expect([unknownUser.code, unknownUser.stderr]).toEqual([
      2,
      'ursa: subject: user "nobody" does not exist in default [USER_NOT_FOUND]\n',
    ]);
    expect((await run('list', 'global')).stderr).toBe(
      'ursa: scope: "global" is not a setting scope [ARGUMENT_INVALID]\n  allowed: user, tenant, project\n',
    );
    expect((await run('list')).stdout).toBe('no settings in default\n');
  });
});

describe('ursa doc restore', () => {
  it('puts a trashed scheduler back and registers it again; refuses a taken path and what is not in the trash', async () => {
    const cwd = freshDir();
    const dir = projectFolder({ '_vance/scheduler/hb.yaml': cronScheduler('0 * * * * *', 'noop') });
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    const key = { tenant: 'default', project: 'demo', name: 'hb' };
    const path = '_vance/scheduler/hb.yaml';
    const trash = () =>
      withRepos(cwd, async (repos) => {
        const trashPath = (await repos.documents.trash(
          { tenant: key.tenant, project: key.project, path },
          1,
        )) as string;
        await repos.schedules.remove(key); // as the refresh after a delete does
        return trashPath;
      });
    const state = () => withRepos(cwd, (repos) => repos.schedules.get(key));

    const trashPath = await trash();
    expect(await state()).toBeUndefined();
    expect(await ursa(['doc', 'restore', trashPath], { cwd })).toEqual({
      code: 0,
      stdout: `${path}\n`,
      stderr: '',
    });
    expect(await state()).toMatchObject({ name: 'hb', nextRunAt: Date.parse('2026-03-28T12:01:00Z') });
    expect((await ursa(['doc', 'cat', path], { cwd })).stdout).toContain('cron: "0 * * * * *"');

    const gone = await ursa(['doc', 'restore', trashPath], { cwd });
    expect([gone.code, gone.stderr.split('\n')[0]]).toEqual([
      2,
      `ursa: path: ${JSON.stringify(trashPath)} is not a trashed document of default/demo [NOT_FOUND]`,
    ]);

    const second = await trash();
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    const taken = await ursa(['doc', 'restore', second], { cwd });
    expect([taken.code, taken.stderr.split('\n')[0]]).toEqual([
      2,
      `ursa: path: cannot restore ${JSON.stringify(second)}: a live document already holds "${path}" in default/demo [CONFLICT]`,
    ]);
    expect((await ursa(['doc', 'ls', '_vance/trash/'], { cwd })).stdout).toBe(`${second}\n`);
  });

  it('refreshes every active project of the tenant after restoring a _tenant scheduler', async () => {
    const cwd = freshDir();
    const dir = projectFolder({ '_vance/scheduler/shared.yaml': cronScheduler('0 0 * * * *', 'noop') });
    expect(
      (await ursa(['settings', 'set', 'project', 'demo', 'lifecycleType', 'PERMANENT'], { cwd })).code,
    ).toBe(0);
    expect((await ursa(['apply', dir, '--project', '_tenant'], { cwd })).code).toBe(0);
    const path = '_vance/scheduler/shared.yaml';
    const key = { tenant: 'default', project: 'demo', name: 'shared' };
    const trashPath = await withRepos(cwd, async (repos) => {
      const moved = (await repos.documents.trash(
        { tenant: 'default', project: '_tenant', path },
        1,
      )) as string;
      await repos.schedules.remove(key);
      return moved;
    });
    const restored = await ursa(['doc', 'restore', trashPath, '--project', '_tenant'], { cwd });
    expect([restored.code, restored.stdout]).toEqual([0, `${path}\n`]);
    expect(await withRepos(cwd, (repos) => repos.schedules.get(key))).toMatchObject({
      source: 'tenant',
      nextRunAt: Date.parse('2026-03-28T13:00:00Z'),
    });
  });
});
