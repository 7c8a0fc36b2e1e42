import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { configOverridesFrom, registerConfig } from '../../src/cli/commands/config.js';
import type { CliIo } from '../../src/cli/io.js';
import { type ConfigOverrides, loadConfig } from '../../src/config/index.js';
import { isUrsaError } from '../../src/errors/index.js';
import { fixedClock } from '../../src/time/clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs `ursa <args>` with only `config` registered, in a directory holding `yaml` as ursa.yaml. */
async function ursa(args: string[], yaml?: string, env: Record<string, string> = {}): Promise<string> {
  const cwd = mkdtempSync(join(tmpdir(), 'ursa-config-cli-'));
  dirs.push(cwd);
  if (yaml !== undefined) writeFileSync(join(cwd, 'ursa.yaml'), yaml);
  let stdout = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: () => undefined },
    stdin: async function* () {},
    clock: fixedClock(Date.parse('2026-03-28T12:00:00Z')),
    env,
    cwd,
  };
  const program = new Command('ursa').exitOverride();
  registerConfig(program, io, (overrides: ConfigOverrides) =>
    loadConfig({ cwd: io.cwd, env: io.env, overrides }),
  );
  await program.parseAsync(args, { from: 'user' });
  return stdout;
}

// decisions §2: `ursa config` prints the effective values and where each came from.
describe('ursa config', () => {
  it('--json prints every setting with its value and source', async () => {
    const out = await ursa(
      ['config', '--json', '--db', 'x.db'],
      'port: 9000\nrunLogRetentionDays: 400\nsecretHosts:\n  URSA_SECRET_HOOK: [hooks.example.com]\n',
      {
        URSA_MISFIRE_THRESHOLD: 'PT2M',
        URSA_WORKFLOWS: '0',
        URSA_OUTBOUND_DENY: '10.0.0.0/8, *.internal.example',
      },
    );
    expect(JSON.parse(out)).toEqual({
      db: { value: 'x.db', source: 'flag --db' },
      logLevel: { value: 'info', source: 'default' },
      misfireThresholdMs: { value: 120000, source: 'env URSA_MISFIRE_THRESHOLD' },
      runLogRetentionDays: { value: 365, source: 'ursa.yaml', note: 'clamped from 400 to 365' },
      budgetRunsPerHour: { value: 0, source: 'default' },
      budgetRunsPerDay: { value: 0, source: 'default' },
      shutdownGraceMs: { value: 30000, source: 'default' },
      workflows: { value: false, source: 'env URSA_WORKFLOWS' },
      templateParseLimit: { value: 8192, source: 'default' },
      templateRenderLimitMs: { value: 20, source: 'default' },
      templateMemoryLimit: { value: 250000, source: 'default' },
      templateListLimit: { value: 2000, source: 'default' },
      templateParamLimit: { value: 65536, source: 'default' },
      templateRunLimit: { value: 1048576, source: 'default' },
      host: { value: '127.0.0.1', source: 'default' },
      port: { value: 9000, source: 'ursa.yaml' },
      tenant: { value: 'default', source: 'default' },
      project: { value: 'demo', source: 'default' },
      outboundAllow: { value: [], source: 'default' },
      outboundDeny: { value: ['10.0.0.0/8', '*.internal.example'], source: 'env URSA_OUTBOUND_DENY' },
      secretHosts: { value: { URSA_SECRET_HOOK: ['hooks.example.com'] }, source: 'ursa.yaml' },
      publicUrl: { value: '', source: 'default' },
    });
  });

  it('prints an aligned table by default, by the names an operator writes', async () => {
    const out = await ursa(['config'], 'runLogRetentionDays: 400\n', { URSA_PORT: '9000' });
    expect(out).toBe(
      [
        'setting              env                          value           source',
        'db                   URSA_DB                      ./data/ursa.db  default',
        'logLevel             URSA_LOG_LEVEL               info            default',
        'misfireThreshold     URSA_MISFIRE_THRESHOLD       60000 (PT1M)    default',
        'runLogRetentionDays  URSA_RUN_LOG_RETENTION_DAYS  365             ursa.yaml (clamped from 400 to 365)',
        'budgetRunsPerHour    URSA_BUDGET_RUNS_PER_HOUR    0               default',
        'budgetRunsPerDay     URSA_BUDGET_RUNS_PER_DAY     0               default',
        'shutdownGrace        URSA_SHUTDOWN_GRACE          30000 (PT30S)   default',
        'workflows            URSA_WORKFLOWS               true            default',
        'templateParseLimit   URSA_TEMPLATE_PARSE_LIMIT    8192            default',
        'templateRenderLimit  URSA_TEMPLATE_RENDER_LIMIT   20 (PT0.02S)    default',
        'templateMemoryLimit  URSA_TEMPLATE_MEMORY_LIMIT   250000          default',
        'templateListLimit    URSA_TEMPLATE_LIST_LIMIT     2000            default',
        'templateParamLimit   URSA_TEMPLATE_PARAM_LIMIT    65536           default',
        'templateRunLimit     URSA_TEMPLATE_RUN_LIMIT      1048576         default',
        'host                 URSA_HOST                    127.0.0.1       default',
        'port                 URSA_PORT                    9000            env URSA_PORT',
        'tenant               URSA_TENANT                  default         default',
        'project              URSA_PROJECT                 demo            default',
        'outboundAllow        URSA_OUTBOUND_ALLOW          none            default',
        'outboundDeny         URSA_OUTBOUND_DENY           none            default',
        'secretHosts          URSA_OUTBOUND_SECRET_HOSTS   none            default',
        'publicUrl            URSA_PUBLIC_URL              none            default',
        '',
      ].join('\n'),
    );
  });

  it('prints a list with commas and a mapping as VAR=hosts; … in the table (issue #19)', async () => {
    const out = await ursa(['config'], 'outboundDeny: [10.0.0.0/8, "*.internal.example"]\n', {
      URSA_OUTBOUND_SECRET_HOSTS: 'URSA_SECRET_A=a.example.com,*.example.org;URSA_SECRET_B=10.0.0.5',
    });
    const row = (setting: string) =>
      out
        .split('\n')
        .find((line) => line.startsWith(`${setting} `))
        ?.split(/\s{2,}/);
    expect(row('outboundDeny')).toEqual([
      'outboundDeny',
      'URSA_OUTBOUND_DENY',
      '10.0.0.0/8, *.internal.example',
      'ursa.yaml',
    ]);
    expect(row('secretHosts')).toEqual([
      'secretHosts',
      'URSA_OUTBOUND_SECRET_HOSTS',
      'URSA_SECRET_A=a.example.com,*.example.org; URSA_SECRET_B=10.0.0.5',
      'env URSA_OUTBOUND_SECRET_HOSTS',
    ]);
  });

  it('hides the password of a PostgreSQL URL', async () => {
    const out = await ursa(['config', '--json'], undefined, {
      URSA_DB: 'postgres://ursa:s3cret@db:5432/ursa',
    });
    expect(JSON.parse(out).db).toEqual({ value: 'postgres://ursa:***@db:5432/ursa', source: 'env URSA_DB' });
    expect(out).not.toContain('s3cret');
  });

  it('lets the CONFIG_INVALID error of the loader through (the CLI exits 2)', async () => {
    const error = await ursa(['config', '--db', '']).catch((e: unknown) => e);
    expect(isUrsaError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toBe(
      '--db: "" is empty (unset it to use the value below it); allowed: a SQLite file path or a postgres:// or postgresql:// URL',
    );
  });
});

describe('configOverridesFrom', () => {
  it('maps the flags given, by their commander names, to settings and ignores everything else', () => {
    expect(
      configOverridesFrom({
        db: 'x.db',
        misfireThreshold: 'PT5S',
        shutdownGrace: undefined,
        workflows: false,
        port: '9000',
        json: true,
      }),
    ).toEqual({ db: 'x.db', misfireThresholdMs: 'PT5S', workflows: 'false', port: '9000' });
    expect(configOverridesFrom({})).toEqual({});
  });
});
