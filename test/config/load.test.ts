import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Config,
  type ConfigOverrides,
  type LoadConfigOptions,
  loadConfig,
  type SettingKey,
  settingKeys,
} from '../../src/config/index.js';
import { isUrsaError, type UrsaError } from '../../src/errors/index.js';
import { thrown } from '../support/cron.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh working directory, with `ursa.yaml` holding `yaml` when given. */
function workdir(yaml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-config-'));
  dirs.push(dir);
  if (yaml !== undefined) writeFileSync(join(dir, 'ursa.yaml'), yaml);
  return dir;
}

function load(
  yaml?: string,
  env: Record<string, string> = {},
  overrides: ConfigOverrides = {},
  file?: string,
): Config {
  const options: LoadConfigOptions = { cwd: workdir(yaml), env, overrides, file };
  return loadConfig(options);
}

/** The CONFIG_INVALID error `fn` throws. */
function configError(fn: () => unknown): UrsaError {
  const error = thrown(fn);
  expect(isUrsaError(error, 'CONFIG_INVALID')).toBe(true);
  return error as UrsaError;
}

function values(config: Config): Record<SettingKey, unknown> {
  return Object.fromEntries(settingKeys.map((k) => [k, config[k]])) as Record<SettingKey, unknown>;
}

const DEFAULTS = {
  db: './data/ursa.db',
  logLevel: 'info',
  misfireThresholdMs: 60_000,
  runLogRetentionDays: 7,
  budgetRunsPerHour: 0,
  budgetRunsPerDay: 0,
  shutdownGraceMs: 30_000,
  workflows: true,
  templateParseLimit: 8_192,
  templateRenderLimitMs: 20,
  templateMemoryLimit: 250_000,
  templateListLimit: 2_000,
  templateParamLimit: 65_536,
  templateRunLimit: 1_048_576,
  host: '127.0.0.1',
  port: 8080,
  tenant: 'default',
  project: 'demo',
  outboundAllow: [],
  outboundDeny: [],
  secretHosts: {},
  publicUrl: '',
};

const allFrom = (source: string) => Object.fromEntries(settingKeys.map((k) => [k, source]));

// decisions §2 operator settings: precedence defaults < ursa.yaml < URSA_* < flags, with provenance.
describe('loadConfig: sources and precedence', () => {
  it('uses the defaults when there is no ursa.yaml, no URSA_* variable and no flag', () => {
    const config = load(undefined, { HOME: '/home/x', URSA_CASES_DIR: '/elsewhere' });
    expect(values(config)).toEqual(DEFAULTS);
    expect(config.sources).toEqual(allFrom('default'));
    expect(config.notes).toEqual({});
  });

  it('ursa.yaml overrides a default, and only the keys it sets', () => {
    const config = load('port: 9000\nmisfireThreshold: PT2M\nworkflows: false\nlogLevel: debug\n');
    expect(values(config)).toEqual({
      ...DEFAULTS,
      port: 9000,
      misfireThresholdMs: 120_000,
      workflows: false,
      logLevel: 'debug',
    });
    expect(config.sources).toEqual({
      ...allFrom('default'),
      port: 'ursa.yaml',
      misfireThresholdMs: 'ursa.yaml',
      workflows: 'ursa.yaml',
      logLevel: 'ursa.yaml',
    });
  });

  it('an URSA_* variable overrides ursa.yaml', () => {
    const config = load('port: 9000\nhost: 0.0.0.0\n', { URSA_PORT: '9100' });
    expect(config.port).toBe(9100);
    expect(config.sources.port).toBe('env URSA_PORT');
    expect(config.host).toBe('0.0.0.0');
    expect(config.sources.host).toBe('ursa.yaml');
  });

  it('a flag overrides an URSA_* variable and ursa.yaml', () => {
    const config = load('db: yaml.db\n', { URSA_DB: 'env.db' }, { db: 'flag.db' });
    expect(config.db).toBe('flag.db');
    expect(config.sources.db).toBe('flag --db');
  });

  it('reads an explicitly named file instead of ursa.yaml and names it as the source', () => {
    const dir = workdir('port: 1111\n');
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'conf', 'prod.yaml'), 'port: 2222\n');
    const config = loadConfig({ cwd: dir, env: {}, file: 'conf/prod.yaml' });
    expect(config.port).toBe(2222);
    expect(config.sources.port).toBe('conf/prod.yaml');
  });

  it('refuses an explicitly named file that does not exist, but not a missing ursa.yaml', () => {
    const dir = workdir();
    expect(loadConfig({ cwd: dir, env: {} }).sources.port).toBe('default');
    const error = configError(() => loadConfig({ cwd: dir, env: {}, file: 'missing.yaml' }));
    expect(error.message).toBe(
      `missing.yaml: file not found (looked for ${join(dir, 'missing.yaml')}); allowed: a readable YAML file`,
    );
    expect(error.field).toBe('missing.yaml');
  });

  it('an empty ursa.yaml or one with only comments sets nothing', () => {
    expect(load('').sources).toEqual(allFrom('default'));
    expect(load('# nothing yet\n').sources).toEqual(allFrom('default'));
  });
});

// Every setting from every source: value, type conversion and provenance.
describe('loadConfig: every setting from each source', () => {
  const cases: { key: SettingKey; yaml: string; env: [string, string]; flag: string; expected: unknown }[] = [
    {
      key: 'db',
      yaml: 'db: postgres://db.internal/ursa',
      env: ['URSA_DB', 'postgres://db.internal/ursa'],
      flag: 'postgres://db.internal/ursa',
      expected: 'postgres://db.internal/ursa',
    },
    {
      key: 'logLevel',
      yaml: 'logLevel: warn',
      env: ['URSA_LOG_LEVEL', 'warn'],
      flag: 'warn',
      expected: 'warn',
    },
    {
      key: 'misfireThresholdMs',
      yaml: 'misfireThreshold: PT1M30.5S',
      env: ['URSA_MISFIRE_THRESHOLD', 'PT1M30.5S'],
      flag: 'PT1M30.5S',
      expected: 90_500,
    },
    {
      key: 'runLogRetentionDays',
      yaml: 'runLogRetentionDays: 30',
      env: ['URSA_RUN_LOG_RETENTION_DAYS', '30'],
      flag: '30',
      expected: 30,
    },
    {
      key: 'budgetRunsPerHour',
      yaml: 'budgetRunsPerHour: 20',
      env: ['URSA_BUDGET_RUNS_PER_HOUR', '20'],
      flag: '20',
      expected: 20,
    },
    {
      key: 'budgetRunsPerDay',
      yaml: 'budgetRunsPerDay: 200',
      env: ['URSA_BUDGET_RUNS_PER_DAY', '200'],
      flag: '200',
      expected: 200,
    },
    {
      key: 'shutdownGraceMs',
      yaml: 'shutdownGrace: PT2H',
      env: ['URSA_SHUTDOWN_GRACE', 'PT2H'],
      flag: 'PT2H',
      expected: 7_200_000,
    },
    {
      key: 'workflows',
      yaml: 'workflows: false',
      env: ['URSA_WORKFLOWS', '0'],
      flag: 'false',
      expected: false,
    },
    {
      key: 'templateParseLimit',
      yaml: 'templateParseLimit: 4096',
      env: ['URSA_TEMPLATE_PARSE_LIMIT', '4096'],
      flag: '4096',
      expected: 4096,
    },
    {
      key: 'templateRenderLimitMs',
      yaml: 'templateRenderLimit: PT0.05S',
      env: ['URSA_TEMPLATE_RENDER_LIMIT', 'PT0.05S'],
      flag: 'PT0.05S',
      expected: 50,
    },
    {
      key: 'templateMemoryLimit',
      yaml: 'templateMemoryLimit: 200000',
      env: ['URSA_TEMPLATE_MEMORY_LIMIT', '200000'],
      flag: '200000',
      expected: 200_000,
    },
    {
      key: 'templateListLimit',
      yaml: 'templateListLimit: 500',
      env: ['URSA_TEMPLATE_LIST_LIMIT', '500'],
      flag: '500',
      expected: 500,
    },
    {
      key: 'templateParamLimit',
      yaml: 'templateParamLimit: 1024',
      env: ['URSA_TEMPLATE_PARAM_LIMIT', '1024'],
      flag: '1024',
      expected: 1024,
    },
    {
      key: 'templateRunLimit',
      yaml: 'templateRunLimit: 8192',
      env: ['URSA_TEMPLATE_RUN_LIMIT', '8192'],
      flag: '8192',
      expected: 8192,
    },
    { key: 'host', yaml: 'host: "::1"', env: ['URSA_HOST', '::1'], flag: '::1', expected: '::1' },
    { key: 'port', yaml: 'port: 65535', env: ['URSA_PORT', '65535'], flag: '65535', expected: 65535 },
    { key: 'tenant', yaml: 'tenant: acme', env: ['URSA_TENANT', 'acme'], flag: 'acme', expected: 'acme' },
    {
      key: 'project',
      yaml: 'project: _tenant',
      env: ['URSA_PROJECT', '_tenant'],
      flag: '_tenant',
      expected: '_tenant',
    },
    {
      key: 'outboundAllow',
      yaml: 'outboundAllow: [hooks.example.com, "*.example.org", 10.0.0.0/8, "fd00::/8"]',
      env: ['URSA_OUTBOUND_ALLOW', 'hooks.example.com, *.example.org,10.0.0.0/8 ,fd00::/8'],
      flag: 'hooks.example.com,*.example.org,10.0.0.0/8,fd00::/8',
      expected: ['hooks.example.com', '*.example.org', '10.0.0.0/8', 'fd00::/8'],
    },
    {
      key: 'outboundDeny',
      yaml: 'outboundDeny: [192.168.0.0/16, "::1", internal.example.com]',
      env: ['URSA_OUTBOUND_DENY', '192.168.0.0/16,::1,internal.example.com'],
      flag: '192.168.0.0/16,::1,internal.example.com',
      expected: ['192.168.0.0/16', '::1', 'internal.example.com'],
    },
    {
      key: 'secretHosts',
      yaml: 'secretHosts:\n  URSA_SECRET_HOOK: [hooks.example.com, "*.example.org"]\n  URSA_SECRET_B: 10.0.0.5',
      env: [
        'URSA_OUTBOUND_SECRET_HOSTS',
        'URSA_SECRET_HOOK=hooks.example.com,*.example.org; URSA_SECRET_B=10.0.0.5',
      ],
      flag: 'URSA_SECRET_HOOK=hooks.example.com,*.example.org;URSA_SECRET_B=10.0.0.5',
      expected: { URSA_SECRET_HOOK: ['hooks.example.com', '*.example.org'], URSA_SECRET_B: ['10.0.0.5'] },
    },
    {
      key: 'publicUrl',
      yaml: 'publicUrl: https://ursa.example.com/',
      env: ['URSA_PUBLIC_URL', 'https://ursa.example.com'],
      flag: 'https://ursa.example.com',
      expected: 'https://ursa.example.com',
    },
  ];

  // issue #25: where agent services call back; a URL they could not use is refused with why.
  it('refuses a publicUrl that agent services could not call back at (issue #25)', () => {
    expect(configError(() => load('publicUrl: ftp://ursa.example.com\n')).message).toMatch(
      /^ursa\.yaml: publicUrl: "ftp:\/\/ursa\.example\.com" is not an http:\/\/ or https:\/\/ URL/,
    );
    expect(configError(() => load('publicUrl: https://u:p@ursa.example.com\n')).message).toMatch(
      /publicUrl: .* must not carry credentials/,
    );
    expect(configError(() => load('publicUrl: ursa.example.com\n')).message).toMatch(
      /publicUrl: .* is not an absolute URL/,
    );
  });

  it('covers every setting', () => {
    expect(cases.map((c) => c.key)).toEqual([...settingKeys]);
  });

  it.each(cases)('$key from ursa.yaml, env and a flag', ({ key, yaml, env, flag, expected }) => {
    const fromYaml = load(`${yaml}\n`);
    expect([fromYaml[key], fromYaml.sources[key]]).toEqual([expected, 'ursa.yaml']);
    const fromEnv = load(undefined, { [env[0]]: env[1] });
    expect([fromEnv[key], fromEnv.sources[key]]).toEqual([expected, `env ${env[0]}`]);
    const fromFlag = load(undefined, {}, { [key]: flag });
    const flagName = `--${key.replace(/Ms$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    expect([fromFlag[key], fromFlag.sources[key]]).toEqual([expected, `flag ${flagName}`]);
  });

  it('URSA_WORKFLOWS accepts true, false, 1 and 0 only', () => {
    expect(['true', 'false', '1', '0'].map((v) => load(undefined, { URSA_WORKFLOWS: v }).workflows)).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(configError(() => load(undefined, { URSA_WORKFLOWS: 'yes' })).message).toBe(
      'env URSA_WORKFLOWS: "yes" is not true, false, 1 or 0; allowed: true or false (1 or 0 in the environment or a flag)',
    );
  });

  it('accepts a SQLite path or a postgresql:// URL for db, and refuses other schemes', () => {
    expect(load(undefined, { URSA_DB: '/var/lib/ursa/ursa.db' }).db).toBe('/var/lib/ursa/ursa.db');
    expect(load(undefined, { URSA_DB: 'postgresql://u@h:5432/d' }).db).toBe('postgresql://u@h:5432/d');
    expect(load(undefined, { URSA_DB: 'postgres:///d?host=/run/pg' }).db).toBe('postgres:///d?host=/run/pg');
    expect(configError(() => load('db: mysql://h/d\n')).message).toBe(
      'ursa.yaml: db: "mysql://h/d" uses the scheme mysql://, which Ursa has no store for; ' +
        'allowed: a SQLite file path or a postgres:// or postgresql:// URL',
    );
  });

  it('never repeats a PostgreSQL password in an error', () => {
    const error = configError(() => load(undefined, { URSA_DB: 'postgres://u:s3cret@/d' }));
    expect(error.message).toBe(
      'env URSA_DB: "postgres://u:***@/d" is not a valid URL; ' +
        'allowed: a SQLite file path or a postgres:// or postgresql:// URL',
    );
    expect(error.value).toBe('postgres://u:***@/d');
  });
});

describe('loadConfig: refused input (CONFIG_INVALID)', () => {
  it('names env URSA_PORT, the value and the allowed range for a port out of range', () => {
    const error = configError(() => load(undefined, { URSA_PORT: '70000' }));
    expect(error.message).toBe('env URSA_PORT: "70000" is out of range; allowed: an integer 1-65535');
    expect([error.code, error.field, error.value, error.allowed]).toEqual([
      'CONFIG_INVALID',
      'env URSA_PORT',
      '70000',
      'an integer 1-65535',
    ]);
    expect(error.status).toBe(500);
  });

  it('names the flag for a bad flag value and the key for a bad ursa.yaml value', () => {
    expect(configError(() => load(undefined, {}, { port: '80.5' })).message).toBe(
      '--port: "80.5" is not a whole number; allowed: an integer 1-65535',
    );
    expect(configError(() => load('port: "8080"\n')).message).toBe(
      'ursa.yaml: port: "8080" is not a number; allowed: an integer 1-65535',
    );
    expect(configError(() => load('port: 0\n')).field).toBe('ursa.yaml: port');
  });

  it('refuses an unknown ursa.yaml key, suggesting the setting it resembles', () => {
    const error = configError(() => load('prot: 8080\n'));
    expect(error.message).toBe(
      'ursa.yaml: prot: unknown setting (did you mean port?); allowed: db, logLevel, misfireThreshold, runLogRetentionDays, ' +
        'budgetRunsPerHour, budgetRunsPerDay, shutdownGrace, workflows, templateParseLimit, templateRenderLimit, templateMemoryLimit, ' +
        'templateListLimit, templateParamLimit, templateRunLimit, host, port, tenant, project, ' +
        'outboundAllow, outboundDeny, secretHosts, publicUrl',
    );
    // issue #23: a slip of a letter or two is a near miss too.
    expect(configError(() => load('shutdownGrase: PT1M\n')).message).toMatch(
      /^ursa\.yaml: shutdownGrase: unknown setting \(did you mean shutdownGrace\?\); /,
    );
    expect(configError(() => load('misfireThresholdMs: PT1M\n')).message).toMatch(
      /^ursa\.yaml: misfireThresholdMs: unknown setting \(did you mean misfireThreshold\?\); allowed: db, /,
    );
  });

  it('refuses a duplicate ursa.yaml key', () => {
    const error = configError(() => load('port: 9000\nhost: localhost\nport: 9001\n'));
    expect(error.message).toBe(
      'ursa.yaml: port: set twice (again at line 3, column 1); allowed: each setting once',
    );
  });

  it('refuses YAML that is not a mapping, and broken YAML', () => {
    expect(configError(() => load('- port\n')).message).toBe(
      'ursa.yaml: not a mapping of settings; allowed: a YAML mapping such as `port: 8080`',
    );
    expect(configError(() => load('port: [8080\n')).message).toMatch(
      /^ursa\.yaml: not valid YAML at line \d+/,
    );
    expect(configError(() => load('port:\n')).message).toBe(
      'ursa.yaml: port: null has no value (remove the key to use the default); allowed: an integer 1-65535',
    );
  });

  it('refuses durations with calendar units, negative, zero (misfire) or not ISO-8601', () => {
    const durations =
      'an ISO-8601 duration greater than zero in weeks, days (24 h), hours, minutes and seconds, e.g. PT60S';
    expect(load('misfireThreshold: P1D\n').misfireThresholdMs).toBe(86_400_000);
    expect(configError(() => load(undefined, { URSA_MISFIRE_THRESHOLD: 'P1M' })).message).toMatch(
      /^env URSA_MISFIRE_THRESHOLD: "P1M" has years or months, which have no fixed length;/,
    );
    expect(configError(() => load(undefined, { URSA_MISFIRE_THRESHOLD: 'PT0S' })).message).toBe(
      `env URSA_MISFIRE_THRESHOLD: "PT0S" is not greater than zero; allowed: ${durations}`,
    );
    expect(configError(() => load(undefined, { URSA_MISFIRE_THRESHOLD: '60' })).message).toBe(
      `env URSA_MISFIRE_THRESHOLD: "60" is not an ISO-8601 duration (e.g. PT30S, PT10M, PT1H30M, P1D); allowed: ${durations}`,
    );
    expect(configError(() => load(undefined, {}, { shutdownGraceMs: '-PT5S' })).message).toMatch(
      /^--shutdown-grace: "-PT5S" is negative; allowed: an ISO-8601 duration of zero or more/,
    );
    // A fraction of a millisecond rounds up, as for every duration (time/duration.ts).
    expect(load('shutdownGrace: PT0.0005S\n').shutdownGraceMs).toBe(1);
    expect(load('shutdownGrace: PT0S\n').shutdownGraceMs).toBe(0);
  });

  it('refuses an outbound entry that is neither a host nor an address range, naming the entry (issue #19)', () => {
    const allowed =
      'a list (comma-separated in the environment or a flag) of a host name (api.example.com), *. and a domain ' +
      '(*.example.org), an IP address or a CIDR range (10.0.0.0/8, fd00::/8)';
    expect(configError(() => load(undefined, { URSA_OUTBOUND_DENY: '10.0.0.0/33' })).message).toBe(
      `env URSA_OUTBOUND_DENY: "10.0.0.0/33" has the entry "10.0.0.0/33", which is not a CIDR range: the prefix length after / is 0-32 for IPv4, 0-128 for IPv6; allowed: ${allowed}`,
    );
    expect(configError(() => load('outboundAllow: [ok.example.com, "http://x/"]\n')).message).toBe(
      `ursa.yaml: outboundAllow: ["ok.example.com","http://x/"] has the entry "http://x/", which is not a host name or IP address; allowed: ${allowed}`,
    );
    expect(
      configError(() => load(undefined, {}, { outboundAllow: 'a.example.com,,b.example.com' })).message,
    ).toBe(
      `--outbound-allow: "a.example.com,,b.example.com" has the entry "", which is empty; allowed: ${allowed}`,
    );
    expect(configError(() => load('outboundDeny: 10.0.0.0/8\n')).message).toMatch(
      /^ursa\.yaml: outboundDeny: "10\.0\.0\.0\/8" is not a list;/,
    );
  });

  it('refuses a secretHosts binding of a variable that is no secret variable, to no host or to a bad host (issue #19)', () => {
    const message = (env: string) =>
      configError(() => load(undefined, { URSA_OUTBOUND_SECRET_HOSTS: env })).message.split('; allowed: ')[0];
    expect(message('PGPASSWORD=db.example.com')).toBe(
      'env URSA_OUTBOUND_SECRET_HOSTS: "PGPASSWORD=db.example.com" has PGPASSWORD, which is not the name of a secret variable (URSA_SECRET_ followed by upper-case letters, digits and _)',
    );
    expect(message('URSA_SECRET_A=')).toBe(
      'env URSA_OUTBOUND_SECRET_HOSTS: "URSA_SECRET_A=" has URSA_SECRET_A, which has the entry "", which is empty',
    );
    expect(message('URSA_SECRET_A=*.10.0.0.1')).toBe(
      'env URSA_OUTBOUND_SECRET_HOSTS: "URSA_SECRET_A=*.10.0.0.1" has URSA_SECRET_A, which has the entry "*.10.0.0.1", which puts *. before an IP address; *. goes before a domain name',
    );
    expect(message('URSA_SECRET_A')).toBe(
      'env URSA_OUTBOUND_SECRET_HOSTS: "URSA_SECRET_A" has "URSA_SECRET_A", which is not VARIABLE=hosts',
    );
    expect(configError(() => load('secretHosts:\n  URSA_SECRET_A: []\n')).message).toMatch(
      /^ursa\.yaml: secretHosts: \{"URSA_SECRET_A":\[\]\} has URSA_SECRET_A, which binds it to no host;/,
    );
  });

  it('collects every problem of every source into one error', () => {
    const error = configError(() =>
      load('port: 0\nlogLevel: loud\n', { URSA_PORT: '9000', URSA_TENANT: 'a b' }, { db: '' }),
    );
    expect(error.issues).toEqual([
      { path: 'ursa.yaml: port', message: '0 is out of range; allowed: an integer 1-65535' },
      {
        path: 'ursa.yaml: logLevel',
        message: '"loud" is not a log level; allowed: fatal, error, warn, info, debug, trace, silent',
      },
      {
        path: 'env URSA_TENANT',
        message: '"a b" is not a valid name; allowed: a name of letters, digits, _ . - (at most 128)',
      },
      {
        path: '--db',
        message:
          '"" is empty (unset it to use the value below it); allowed: a SQLite file path or a postgres:// or postgresql:// URL',
      },
    ]);
    expect(error.message).toBe(
      [
        'ursa.yaml: port: 0 is out of range; allowed: an integer 1-65535',
        'ursa.yaml: logLevel: "loud" is not a log level; allowed: fatal, error, warn, info, debug, trace, silent',
        'env URSA_TENANT: "a b" is not a valid name; allowed: a name of letters, digits, _ . - (at most 128)',
        '--db: "" is empty (unset it to use the value below it); allowed: a SQLite file path or a postgres:// or postgresql:// URL',
      ].join('\n'),
    );
    expect([error.field, error.value, error.allowed]).toEqual(['ursa.yaml: port', undefined, undefined]);
  });
});

// spec §9a: > 0 days clamped to ≤ 365, 0 keeps forever, < 0 disables run logs.
describe('loadConfig: run-log retention', () => {
  it('clamps more than 365 days to 365 and says so, from any source', () => {
    const fromYaml = load('runLogRetentionDays: 400\n');
    expect(fromYaml.runLogRetentionDays).toBe(365);
    expect(fromYaml.sources.runLogRetentionDays).toBe('ursa.yaml');
    expect(fromYaml.notes).toEqual({ runLogRetentionDays: 'clamped from 400 to 365' });
    const fromEnv = load(undefined, { URSA_RUN_LOG_RETENTION_DAYS: '1000' });
    expect([fromEnv.runLogRetentionDays, fromEnv.notes.runLogRetentionDays]).toEqual([
      365,
      'clamped from 1000 to 365',
    ]);
  });

  it('keeps 365, 0 (forever) and negative values (disabled) as they are, with no note', () => {
    for (const days of [365, 0, -1, -30]) {
      const config = load(undefined, { URSA_RUN_LOG_RETENTION_DAYS: String(days) });
      expect([config.runLogRetentionDays, config.notes]).toEqual([days, {}]);
    }
  });

  it('refuses a fraction of a day', () => {
    expect(configError(() => load('runLogRetentionDays: 1.5\n')).message).toMatch(
      /^ursa\.yaml: runLogRetentionDays: 1.5 is not a whole number; allowed: a whole number: 1-365 days/,
    );
  });
});

// decisions §2: validated once at start, then frozen.
describe('loadConfig: frozen', () => {
  it('throws on any change to the config, its sources or its notes', () => {
    const config = load('runLogRetentionDays: 500\n');
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.sources as Record<string, string>).port = 'flag --port';
    }).toThrow(TypeError);
    expect(() => {
      (config.notes as Record<string, string>).runLogRetentionDays = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (config as unknown as Record<string, unknown>).extra = true;
    }).toThrow(TypeError);
    expect(config.port).toBe(8080);
  });

  it('does not keep or change the overrides and env objects it was given', () => {
    const env = { URSA_PORT: '9000' };
    const overrides = { db: 'x.db' };
    load(undefined, env, overrides);
    expect(Object.isFrozen(env)).toBe(false);
    expect(Object.isFrozen(overrides)).toBe(false);
    expect(overrides).toEqual({ db: 'x.db' });
  });
});
