import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, repositories, type TokenRecord } from '../../src/store/index.js';
import { ursa } from '../support/cli.js';

const freshDir = () => mkdtempSync(join(tmpdir(), 'ursa-token-'));

/** What the store of `cwd` says about a secret. */
async function verify(cwd: string, secret: string): Promise<TokenRecord | undefined> {
  const store = await openStore(join(cwd, 'data', 'ursa.db'));
  try {
    const checked = await repositories(store).tokens.check(secret, Date.parse('2026-03-28T12:00:00Z'));
    return checked.state === 'live' ? checked.token : undefined;
  } finally {
    await store.close();
  }
}

// issue #7 item 4 / decisions §6: bearer tokens, stored hashed, created and revoked by the operator.
describe('ursa token', () => {
  it('creates tokens that verify, prints each secret once, lists them without secrets and revokes them', async () => {
    const cwd = freshDir();
    const created = await ursa(['token', 'create', '--tenant', 'acme', '--role', 'write', '--user', 'wes'], {
      cwd,
    });
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('');
    const [head, secretLine] = created.stdout.trimEnd().split('\n');
    expect(head).toMatch(/^created tok_[0-9a-f]{12}: role write, tenant acme, user wes$/);
    const secret = /^secret \(shown once; only its hash is stored\): (ursa_[A-Za-z0-9_-]{43})$/.exec(
      secretLine ?? '',
    )?.[1] as string;
    expect(secret).toBeDefined();
    const id = /tok_[0-9a-f]{12}/.exec(head ?? '')?.[0] as string;
    expect(await verify(cwd, secret)).toMatchObject({
      id,
      tenant: 'acme',
      role: 'write',
      user: 'wes',
      label: null,
    });

    const operator = await ursa(
      ['token', 'create', '--all-tenants', '--role', 'admin', '--label', 'ops team', '--json'],
      { cwd, now: '2026-03-28T13:00:00Z' },
    );
    const json = JSON.parse(operator.stdout);
    expect(json).toEqual({
      id: expect.stringMatching(/^tok_/),
      tenant: null,
      project: null,
      role: 'admin',
      user: 'admin',
      label: 'ops team',
      createdAt: '2026-03-28T13:00:00Z',
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      secret: expect.stringMatching(/^ursa_/),
    });
    expect(await verify(cwd, json.secret)).toMatchObject({ tenant: null, role: 'admin' });
    // Without --tenant: the configured tenant (URSA_TENANT, else "default").
    const configured = await ursa(['token', 'create', '--role', 'read', '--json'], {
      cwd,
      env: { URSA_TENANT: 'zoo' },
      now: '2026-03-28T13:30:00Z',
    });
    expect(JSON.parse(configured.stdout)).toMatchObject({ tenant: 'zoo', role: 'read', user: 'admin' });

    const list = await ursa(['token', 'list'], { cwd });
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain('ursa_');
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +TENANT +PROJECT +ROLE +USER +CREATED +EXPIRES +LAST USED +STATE +LABEL$/);
    expect(lines[1]).toMatch(
      new RegExp(`^${id}  acme    \\* {8}write  wes    2026-03-28T12:00:00Z  never    never      live$`),
    );
    expect(lines[2]).toMatch(
      /^tok_[0-9a-f]{12} {2}\* {7}\* {8}admin {2}admin {2}2026-03-28T13:00:00Z {2}never {4}never {6}live {3}ops team$/,
    );
    expect(lines).toHaveLength(4);

    expect(await ursa(['token', 'revoke', id], { cwd, now: '2026-03-28T14:00:00Z' })).toEqual({
      code: 0,
      stdout: `revoked ${id}\n`,
      stderr: '',
    });
    expect(await verify(cwd, secret)).toBeUndefined();
    const listed = JSON.parse((await ursa(['token', 'list', '--json'], { cwd })).stdout);
    expect(listed[0]).toEqual({
      id,
      tenant: 'acme',
      project: null,
      role: 'write',
      user: 'wes',
      label: null,
      createdAt: '2026-03-28T12:00:00Z',
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: '2026-03-28T14:00:00Z',
    });
    expect(listed.every((t: Record<string, unknown>) => !('secret' in t))).toBe(true);
    expect((await ursa(['token', 'list'], { cwd })).stdout).toContain('revoked 2026-03-28T14:00:00Z');

    const again = await ursa(['token', 'revoke', id], { cwd });
    expect(again).toEqual({
      code: 2,
      stdout: '',
      stderr: `ursa: id: "${id}" is not a live token [NOT_FOUND]\n  allowed: the id of a live token (ursa token list)\n`,
    });
  });

  it('refuses a bad role, both --tenant and --all-tenants, and a bad user name', async () => {
    const cwd = freshDir();
    expect(await ursa(['token', 'create', '--role', 'root'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ursa: role: "root" is not a role [ARGUMENT_INVALID]\n' +
        '  allowed: read, write, admin (read can GET, write also changes schedulers and fires, admin also refreshes and names another runAs)\n',
    });
    const both = await ursa(['token', 'create', '--role', 'read', '--tenant', 'a', '--all-tenants'], { cwd });
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([
      2,
      'ursa: tenant: --tenant and --all-tenants exclude each other [ARGUMENT_INVALID]',
    ]);
    const user = await ursa(['token', 'create', '--role', 'read', '--user', '../x'], { cwd });
    expect([user.code, user.stderr.includes('[NAME_INVALID]')]).toEqual([2, true]);
    const missing = await ursa(['token', 'create'], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--role <role>' not specified");
    expect((await ursa(['token', 'list'], { cwd })).stdout).toBe(
      'no tokens (ursa serve creates an admin token on its first start)\n',
    );
  });

  it('creates a project-scoped token that expires, shows its expiry and last use, and rotates it (issue #19)', async () => {
    const cwd = freshDir();
    const created = await ursa(
      ['token', 'create', '--tenant', 'acme', '--project', 'ops', '--role', 'write', '--expires-in', 'P30D'],
      { cwd },
    );
    const [head, line] = created.stdout.trimEnd().split('\n');
    expect(head).toMatch(
      /^created tok_[0-9a-f]{12}: role write, tenant acme, project ops, user admin, expires 2026-04-27T12:00:00Z$/,
    );
    const id = /tok_[0-9a-f]{12}/.exec(head ?? '')?.[0] as string;
    const secret = /(ursa_\S+)$/.exec(line ?? '')?.[1] as string;
    expect(await verify(cwd, secret)).toMatchObject({
      id,
      project: 'ops',
      expiresAt: Date.parse('2026-04-27T12:00:00Z'),
    });
    const at = await ursa(
      [
        'token',
        'create',
        '--project',
        '_tenant',
        '--role',
        'read',
        '--expires-at',
        '2026-03-29T00:00:00+02:00',
        '--json',
      ],
      { cwd },
    );
    expect(JSON.parse(at.stdout)).toMatchObject({
      tenant: 'default',
      project: '_tenant',
      expiresAt: '2026-03-28T22:00:00Z',
      lastUsedAt: null,
    });
    // A day later the second one has expired; list says so.
    const list = await ursa(['token', 'list'], { cwd, now: '2026-03-29T12:00:00Z' });
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows[1]).toMatch(
      /^tok_\w+ {2}acme {5}ops {6}write {2}admin {2}2026-03-28T12:00:00Z {2}2026-04-27T12:00:00Z {2}never {6}live$/,
    );
    expect(rows[2]).toMatch(
      /^tok_\w+ {2}default {2}_tenant {2}read {3}admin {2}2026-03-28T12:00:00Z {2}2026-03-28T22:00:00Z {2}never {6}expired$/,
    );

    const rotated = await ursa(['token', 'rotate', id], { cwd, now: '2026-03-28T13:00:00Z' });
    expect(rotated.code).toBe(0);
    const [said, newLine] = rotated.stdout.trimEnd().split('\n');
    expect(said).toBe(`rotated ${id}: the old secret stopped working now`);
    const fresh = /^secret \(shown once; only its hash is stored\): (ursa_[A-Za-z0-9_-]{43})$/.exec(
      newLine ?? '',
    )?.[1];
    expect(await verify(cwd, secret)).toBeUndefined();
    expect(await verify(cwd, fresh as string)).toMatchObject({ id, project: 'ops', role: 'write' });
    const graced = await ursa(['token', 'rotate', id, '--grace', 'PT5M', '--json'], {
      cwd,
      now: '2026-03-28T13:00:00Z',
    });
    expect(JSON.parse(graced.stdout)).toMatchObject({
      id,
      project: 'ops',
      oldSecretUntil: '2026-03-28T13:05:00Z',
      secret: expect.stringMatching(/^ursa_/),
    });
    expect(await verify(cwd, fresh as string)).toMatchObject({ id });
  });

  it('refuses a bad expiry, a grace over a day, a scope without a tenant and rotating a token that is not live (issue #19)', async () => {
    const cwd = freshDir();
    const refused = async (args: string[]) => {
      const run = await ursa(args, { cwd });
      expect(run.code).toBe(2);
      return run.stderr.split('\n')[0];
    };
    expect(await refused(['token', 'create', '--role', 'read', '--expires-in', 'P1M'])).toBe(
      'ursa: expires-in: "P1M" has years or months, which have no fixed length; use weeks, days, hours, minutes or seconds (e.g. P30D) [ARGUMENT_INVALID]',
    );
    expect(await refused(['token', 'create', '--role', 'read', '--expires-at', '2026-03-28T11:00:00Z'])).toBe(
      'ursa: expires-at: "2026-03-28T11:00:00Z" is not in the future [ARGUMENT_INVALID]',
    );
    expect(await refused(['token', 'create', '--role', 'read', '--expires-at', '2026-03-28 12:00'])).toBe(
      'ursa: expires-at: "2026-03-28 12:00" is not an instant [INSTANT_INVALID]',
    );
    expect(
      await refused([
        'token',
        'create',
        '--role',
        'read',
        '--expires-in',
        'P1D',
        '--expires-at',
        '2026-04-01T00:00:00Z',
      ]),
    ).toBe('ursa: expires-in: --expires-in and --expires-at exclude each other [ARGUMENT_INVALID]');
    expect(await refused(['token', 'create', '--role', 'read', '--all-tenants', '--project', 'ops'])).toBe(
      'ursa: project: a project scope needs a tenant, not --all-tenants [ARGUMENT_INVALID]',
    );
    expect(await refused(['token', 'create', '--role', 'read', '--project', '../x'])).toBe(
      'ursa: --project: "../x" is not a valid name; allowed: a name of letters, digits, _ . - (at most 128) [CONFIG_INVALID]',
    );
    const json = JSON.parse((await ursa(['token', 'create', '--role', 'read', '--json'], { cwd })).stdout);
    expect(await refused(['token', 'rotate', json.id, '--grace', 'P2D'])).toBe(
      'ursa: grace: "P2D" is too long [ARGUMENT_INVALID]',
    );
    expect((await ursa(['token', 'revoke', json.id], { cwd })).code).toBe(0);
    expect(await refused(['token', 'rotate', json.id])).toBe(
      `ursa: id: "${json.id}" is not a live token [NOT_FOUND]`,
    );
    // Nothing was created by the refusals: one token, revoked.
    expect(JSON.parse((await ursa(['token', 'list', '--json'], { cwd })).stdout)).toHaveLength(1);
  });
});
