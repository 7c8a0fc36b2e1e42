import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import {
  DEFAULT_FEED_RETENTION_DAYS,
  displayTimezone,
  effectiveSetting,
  feedRetentionDays,
  isPinned,
  resolveDisplayTimezone,
  runLogRetentionDays,
  type SettingInput,
  setSetting,
  unsetSetting,
} from '../../src/service/settings.js';
import type { Repositories } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const NOW = Date.parse('2026-06-01T00:00:00Z');

/** The UrsaError `fn` throws (fails the test when it throws nothing or something else). */
async function failure(fn: () => Promise<unknown>): Promise<UrsaError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof UrsaError) return error;
    throw error;
  }
  throw new Error('expected an UrsaError');
}

// decisions §2 settings cascade, spec §9a run-log retention, spec §12 feed retention — on both dialects.
describe.each(DIALECTS)('settings on %s (decisions §2)', (dialect) => {
  let t: TestRuntime;
  let repos: Repositories;
  const set = (input: Omit<SettingInput, 'tenant'>, tenant = T) =>
    setSetting(t.rt, { tenant, ...input }, NOW);
  beforeEach(async () => {
    t = await testRuntime('2026-06-01T00:00:00Z', { dialect });
    repos = t.rt.repos;
  });
  afterEach(() => t.close());

  describe('display.timezone: user setting → user profile → tenant → UTC', () => {
    it('takes each level in turn, the most specific first', async () => {
      await repos.users.ensure(T, 'alice', NOW);
      expect(await displayTimezone(repos, T, 'alice')).toBe('UTC');
      expect(await resolveDisplayTimezone(repos, T, 'alice')).toEqual({ value: 'UTC', from: 'default' });

      await set({ scope: 'tenant', subject: '', key: 'display.timezone', value: 'Europe/Berlin' });
      expect(await resolveDisplayTimezone(repos, T, 'alice')).toEqual({
        value: 'Europe/Berlin',
        from: 'setting tenant',
      });

      // The user's profile zone is the user level: it wins over the tenant.
      await repos.users.ensure(T, 'bob', NOW, 'America/New_York');
      expect(await resolveDisplayTimezone(repos, T, 'bob')).toEqual({
        value: 'America/New_York',
        from: 'profile of user bob',
      });

      // An explicit user setting wins over the profile.
      await set({ scope: 'user', subject: 'bob', key: 'display.timezone', value: 'Asia/Tokyo' });
      expect(await resolveDisplayTimezone(repos, T, 'bob')).toEqual({
        value: 'Asia/Tokyo',
        from: 'setting user/bob',
      });
      expect(await displayTimezone(repos, T, 'alice')).toBe('Europe/Berlin');
      // A user the tenant does not have gets the tenant's zone; another tenant has none of it.
      expect(await displayTimezone(repos, T, 'nobody')).toBe('Europe/Berlin');
      expect(await displayTimezone(repos, 'other', 'bob')).toBe('UTC');

      // Removing the setting lets the profile apply again.
      expect(
        await unsetSetting(t.rt, { tenant: T, scope: 'user', subject: 'bob', key: 'display.timezone' }),
      ).toBe(true);
      expect(await displayTimezone(repos, T, 'bob')).toBe('America/New_York');
    });

    it('skips a stored zone that is not one (written around setSetting)', async () => {
      await repos.users.ensure(T, 'alice', NOW, 'Not/AZone');
      await repos.settings.set(
        { tenant: T, scope: 'user', subject: 'alice', key: 'display.timezone', value: 'x' },
        NOW,
      );
      await set({ scope: 'tenant', subject: '', key: 'display.timezone', value: 'Europe/Paris' });
      expect(await displayTimezone(repos, T, 'alice')).toBe('Europe/Paris');
    });
  });

  describe('scheduler.log.retentionDays: project → _tenant → operator config (spec §9a)', () => {
    it('takes the first level that is set', async () => {
      expect(await runLogRetentionDays(repos, T, 'ops', 7)).toBe(7);
      await set({ scope: 'project', subject: '_tenant', key: 'scheduler.log.retentionDays', value: '30' });
      expect(await runLogRetentionDays(repos, T, 'ops', 7)).toBe(30);
      await set({ scope: 'project', subject: 'ops', key: 'scheduler.log.retentionDays', value: '14' });
      expect(await runLogRetentionDays(repos, T, 'ops', 7)).toBe(14);
      expect(await runLogRetentionDays(repos, T, 'dev', 7)).toBe(30);
      expect(await runLogRetentionDays(repos, 'other', 'ops', 7)).toBe(7);
    });

    it('keeps the tri-state and clamps more than 365 days to 365', async () => {
      const days = async (value: string) => {
        await set({ scope: 'project', subject: 'ops', key: 'scheduler.log.retentionDays', value });
        return runLogRetentionDays(repos, T, 'ops', 7);
      };
      expect(await days('1000')).toBe(365);
      expect(await days('365')).toBe(365);
      expect(await days('0')).toBe(0);
      expect(await days('-1')).toBe(-1);
      expect(await days('-30')).toBe(-30);
      expect(await runLogRetentionDays(repos, T, 'dev', 500)).toBe(365);
      expect(await runLogRetentionDays(repos, T, 'dev', -1)).toBe(-1);
    });

    it('says where the value came from', async () => {
      const get = (project: string) =>
        effectiveSetting(
          t.rt,
          { tenant: T, scope: 'project', subject: project, key: 'scheduler.log.retentionDays' },
          7,
        );
      expect(await get('ops')).toEqual({ value: '7', from: 'operator config' });
      await set({ scope: 'project', subject: '_tenant', key: 'scheduler.log.retentionDays', value: '30' });
      expect(await get('ops')).toEqual({ value: '30', from: 'setting project/_tenant' });
      await set({ scope: 'project', subject: 'ops', key: 'scheduler.log.retentionDays', value: '400' });
      expect(await get('ops')).toEqual({ value: '365', from: 'setting project/ops' });
    });
  });

  it('feed.retentionDays: the tenant setting, default 90 (spec §12)', async () => {
    expect(DEFAULT_FEED_RETENTION_DAYS).toBe(90);
    expect(await feedRetentionDays(repos, T)).toBe(90);
    await set({ scope: 'tenant', subject: '', key: 'feed.retentionDays', value: '30' });
    expect(await feedRetentionDays(repos, T)).toBe(30);
    expect(await feedRetentionDays(repos, 'other')).toBe(90);
    await set({ scope: 'tenant', subject: '', key: 'feed.retentionDays', value: '0' });
    expect(await feedRetentionDays(repos, T)).toBe(0);
    expect(
      await effectiveSetting(t.rt, { tenant: T, scope: 'tenant', subject: '', key: 'feed.retentionDays' }, 7),
    ).toEqual({
      value: '0',
      from: 'setting tenant',
    });
  });

  it('lifecycleType: PERMANENT pins a project, NORMAL or nothing does not', async () => {
    expect(await isPinned(repos, T, 'ops')).toBe(false);
    expect(await set({ scope: 'project', subject: 'ops', key: 'lifecycleType', value: 'permanent' })).toEqual(
      {
        tenant: T,
        scope: 'project',
        subject: 'ops',
        key: 'lifecycleType',
        value: 'PERMANENT',
      },
    );
    expect(await isPinned(repos, T, 'ops')).toBe(true);
    expect(await isPinned(repos, T, 'dev')).toBe(false);
    await set({ scope: 'project', subject: 'ops', key: 'lifecycleType', value: 'NORMAL' });
    expect(await isPinned(repos, T, 'ops')).toBe(false);
  });

  it('stores normalised values', async () => {
    await repos.users.ensure(T, 'alice', NOW);
    expect(
      (await set({ scope: 'user', subject: 'alice', key: 'display.timezone', value: 'europe/berlin' })).value,
    ).toBe('Europe/Berlin');
    expect(
      (await set({ scope: 'tenant', subject: '', key: 'feed.retentionDays', value: ' 007 ' })).value,
    ).toBe('7');
    expect(await repos.settings.list(T)).toEqual([
      { tenant: T, scope: 'tenant', subject: '', key: 'feed.retentionDays', value: '7' },
      { tenant: T, scope: 'user', subject: 'alice', key: 'display.timezone', value: 'Europe/Berlin' },
    ]);
  });

  it('refuses unknown keys, wrong scopes and subjects, bad values and unknown users, naming the field', async () => {
    await repos.users.ensure(T, 'alice', NOW);
    const refused = async (input: Omit<SettingInput, 'tenant'>) => {
      const error = await failure(() => set(input));
      return { code: error.code, field: error.field, message: error.message, allowed: error.allowed };
    };
    expect(await refused({ scope: 'tenant', subject: '', key: 'feed.retention', value: '1' })).toEqual({
      code: 'ARGUMENT_INVALID',
      field: 'key',
      message: 'key: "feed.retention" is not a setting Ursa knows',
      allowed:
        'display.timezone, scheduler.log.retentionDays, scheduler.budget.runsPerHour, scheduler.budget.runsPerDay, feed.retentionDays, lifecycleType',
    });
    // issue #23: a near miss is named.
    expect(
      (await refused({ scope: 'tenant', subject: '', key: 'feed.retentionDay', value: '1' })).message,
    ).toBe('key: "feed.retentionDay" is not a setting Ursa knows (did you mean "feed.retentionDays"?)');
    expect(await refused({ scope: 'global', subject: '', key: 'feed.retentionDays', value: '1' })).toEqual({
      code: 'ARGUMENT_INVALID',
      field: 'scope',
      message: 'scope: "global" is not a setting scope',
      allowed: 'user, tenant, project',
    });
    expect(
      await refused({ scope: 'project', subject: 'ops', key: 'display.timezone', value: 'UTC' }),
    ).toEqual({
      code: 'ARGUMENT_INVALID',
      field: 'scope',
      message: 'scope: display.timezone cannot be set on project',
      allowed: 'user, tenant',
    });
    expect(
      await refused({ scope: 'tenant', subject: 'x', key: 'feed.retentionDays', value: '1' }),
    ).toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'subject',
    });
    expect(
      await refused({ scope: 'project', subject: '_tenant', key: 'lifecycleType', value: 'PERMANENT' }),
    ).toEqual({
      code: 'ARGUMENT_INVALID',
      field: 'subject',
      message: 'subject: "_tenant" is not allowed here',
      allowed: 'a project name (not _tenant)',
    });
    expect(
      await refused({ scope: 'project', subject: 'a/b', key: 'scheduler.log.retentionDays', value: '1' }),
    ).toMatchObject({ code: 'ARGUMENT_INVALID', field: 'subject' });
    expect(
      await refused({ scope: 'user', subject: 'alice', key: 'display.timezone', value: 'Mars/Olympus' }),
    ).toEqual({
      code: 'ARGUMENT_INVALID',
      field: 'value',
      message: 'value: "Mars/Olympus" is not allowed for display.timezone',
      allowed: 'an IANA time zone id such as Europe/Berlin, America/New_York or UTC',
    });
    for (const value of ['1.5', 'ten', '', '1e3', '1234567']) {
      expect(
        await refused({ scope: 'project', subject: 'ops', key: 'scheduler.log.retentionDays', value }),
      ).toMatchObject({ code: 'ARGUMENT_INVALID', field: 'value' });
    }
    expect(
      await refused({ scope: 'project', subject: 'ops', key: 'lifecycleType', value: 'PINNED' }),
    ).toMatchObject({
      code: 'ARGUMENT_INVALID',
      field: 'value',
      allowed: 'NORMAL or PERMANENT',
    });
    expect(await refused({ scope: 'user', subject: 'carol', key: 'display.timezone', value: 'UTC' })).toEqual(
      {
        code: 'USER_NOT_FOUND',
        field: 'subject',
        message: 'subject: user "carol" does not exist in acme',
        allowed: undefined,
      },
    );
    expect(await repos.settings.list(T)).toEqual([]);
  });
});
