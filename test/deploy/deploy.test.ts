import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { settingDefinitions } from '../../src/config/schema.js';
import { fixedClock } from '../../src/time/clock.js';
import { tempDir } from '../support/temp.js';

// issue #26 item 5: deploy/Dockerfile and deploy/ursa.service cannot be built or started here (no
// docker, no systemd); what can run is checked: the commands they run exist in the built CLI and
// start, and their paths and ports are the configuration's defaults.

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'dist/cli/main.js');

/** The unit's `Key=value` lines by section, each key with every value it was given. */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header !== null) {
      current = new Map();
      sections.set(header[1] as string, current);
      continue;
    }
    const eq = line.indexOf('=');
    if (current === undefined || eq < 0) throw new Error(`not a unit line: ${line}`);
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

/** The Dockerfile's instructions (continuation lines joined), in order, as [instruction, arguments]. */
function parseDockerfile(text: string): [string, string][] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const space = line.indexOf(' ');
      return [line.slice(0, space).toUpperCase(), line.slice(space + 1).trim()];
    });
}

const commandNames = (): string[] =>
  buildProgram({
    stdout: { write: () => true },
    stderr: { write: () => true },
    stdin: async function* () {},
    clock: fixedClock(0),
    env: {},
    cwd: ROOT,
  }).commands.map((c) => c.name());

/** Runs the built CLI with `args`; the environment has only PATH and `env`. */
function cli(args: string[], env: Record<string, string> = {}, cwd = ROOT) {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

const DEFAULT_PORT = String(settingDefinitions.port.default);
const GRACE_S = settingDefinitions.shutdownGraceMs.default / 1000;

describe('deploy/ursa.service', () => {
  const unit = parseUnit(readFileSync(join(ROOT, 'deploy/ursa.service'), 'utf8'));
  const service = unit.get('Service') ?? new Map<string, string[]>();
  const one = (key: string) => {
    const values = service.get(key) ?? [];
    expect(values, key).toHaveLength(1);
    return values[0] as string;
  };
  const environment = Object.fromEntries(
    (service.get('Environment') ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );

  it('runs the documented command, `node dist/cli/main.js serve`, which the built CLI has', () => {
    const argv = one('ExecStart').split(/\s+/);
    expect(argv.slice(0, 3)).toEqual(['/usr/bin/node', '/opt/ursa/dist/cli/main.js', 'serve']);
    expect(commandNames()).toContain('serve');
    const help = cli([...argv.slice(2), '--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('run the scheduler and the REST API');
  });

  it('passes ursa doctor with its environment, its store in a state folder like its own', () => {
    const state = tempDir('ursa-state-');
    const env = { ...environment, URSA_DB: environment.URSA_DB?.replace('/var/lib/ursa', state) ?? '' };
    // The store is created by `ursa migrate` as `ursa serve` would at its first start.
    expect(cli(['migrate'], env, state).status).toBe(0);
    const run = cli(['doctor', '--json', ...one('ExecStart').split(/\s+/).slice(3)], env, state);
    const report = JSON.parse(run.stdout) as {
      findings: { check: string; severity: string; message: string }[];
    };
    expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(report.findings.find((f) => f.check === 'config')?.message).toContain(
      'environment URSA_DB, URSA_HOST, URSA_PORT',
    );
    expect(report.findings.find((f) => f.check === 'permissions')?.severity).toBe('ok');
    expect(run.status).toBe(0);
  });

  it('keeps the store in its state folder, on the default port, as a dedicated user', () => {
    expect(one('StateDirectory')).toBe('ursa');
    expect(one('StateDirectoryMode')).toBe('0700');
    expect(dirname(environment.URSA_DB ?? '')).toBe(`/var/lib/${one('StateDirectory')}`);
    expect(one('WorkingDirectory')).toBe('/var/lib/ursa');
    expect(environment.URSA_PORT).toBe(DEFAULT_PORT);
    expect(environment.URSA_HOST).toBe(settingDefinitions.host.default);
    expect(one('User')).toBe('ursa');
    expect(one('Restart')).toBe('on-failure');
  });

  it('stops Ursa alone with SIGTERM and waits longer than its shutdown grace', () => {
    expect(one('KillMode')).toBe('mixed');
    expect(one('KillSignal')).toBe('SIGTERM');
    expect(Number(one('TimeoutStopSec'))).toBeGreaterThan(GRACE_S);
    for (const key of [
      'NoNewPrivileges',
      'ProtectSystem',
      'ProtectHome',
      'PrivateTmp',
      'CapabilityBoundingSet',
    ])
      expect(service.has(key), key).toBe(true);
    // The JIT compiler writes executable memory.
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);
  });
});

describe('deploy/Dockerfile', () => {
  const instructions = parseDockerfile(readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8'));
  const all = (name: string) => instructions.filter(([i]) => i === name).map(([, args]) => args);
  const runtime = instructions.slice(instructions.findLastIndex(([i]) => i === 'FROM'));
  const inRuntime = (name: string) => runtime.filter(([i]) => i === name).map(([, args]) => args);
  const env = Object.fromEntries(
    inRuntime('ENV').flatMap((args) => [...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])),
  ) as Record<string, string>;

  it('builds in one stage and runs on node:20-slim in another, as a non-root user', () => {
    expect(all('FROM')).toEqual(['node:20-slim AS build', 'node:20-slim']);
    expect(all('RUN').some((r) => r.includes('npm run build'))).toBe(true);
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<
      string,
      string
    >;
    expect(scripts.build).toBeDefined();
    expect(inRuntime('USER')).toEqual(['ursa']);
    // Only the production dependencies, dist/ and the demo reach the runtime stage.
    expect(inRuntime('COPY').map((c) => c.split(/\s+/)[1])).toEqual([
      '/src/package.json',
      '/src/node_modules',
      '/src/dist',
      '/src/examples',
    ]);
  });

  it('copies into the build only what the repository has', () => {
    const build = instructions.slice(
      0,
      instructions.findLastIndex(([i]) => i === 'FROM'),
    );
    for (const copy of build.filter(([i]) => i === 'COPY').map(([, args]) => args.split(/\s+/))) {
      for (const source of copy.slice(0, -1)) expect(existsSync(join(ROOT, source)), source).toBe(true);
    }
  });

  it("starts `ursa serve` from the built CLI, whose commands the image's entry point reaches", () => {
    const entrypoint = JSON.parse(all('ENTRYPOINT')[0] ?? '[]') as string[];
    const cmd = JSON.parse(all('CMD')[0] ?? '[]') as string[];
    expect(entrypoint).toEqual(['/usr/bin/tini', '--', 'node', '/app/dist/cli/main.js']);
    expect(cmd).toEqual(['serve']);
    expect(commandNames()).toEqual(expect.arrayContaining(['serve', 'doctor', 'migrate']));
    expect(entrypoint[3]?.replace('/app/', `${ROOT}/`)).toBe(BIN);
    const help = execFileSync(process.execPath, [BIN, ...cmd, '--help'], { encoding: 'utf8' });
    expect(help).toContain('run the scheduler and the REST API');
  });

  it('keeps the store on the volume and serves the default port, which the health check asks', () => {
    expect(inRuntime('VOLUME')).toEqual(['/var/lib/ursa']);
    expect(dirname(env.URSA_DB ?? '')).toBe('/var/lib/ursa');
    expect(env.URSA_PORT).toBe(DEFAULT_PORT);
    expect(env.URSA_HOST).toBe('0.0.0.0');
    expect(inRuntime('EXPOSE')).toEqual([DEFAULT_PORT]);
    const [check] = inRuntime('HEALTHCHECK');
    expect(check).toContain('/healthz');
    expect(check).toContain(`process.env.URSA_PORT || ${DEFAULT_PORT}`);
  });

  it('accepts its own environment as a valid configuration', () => {
    const run = cli(['config', '--json'], { ...env, URSA_DB: join(tempDir('ursa-image-'), 'ursa.db') });
    expect(run.status, run.stderr).toBe(0);
    const config = JSON.parse(run.stdout) as Record<string, { value: unknown; source: string }>;
    expect(config.port).toEqual({ value: 8080, source: 'env URSA_PORT' });
    expect(config.host).toEqual({ value: '0.0.0.0', source: 'env URSA_HOST' });
  });
});

// Issue #24: the benchmarks run workers as the deployment files do, with the same Node options.
describe('the Node options of a deployed worker', () => {
  it('are the same in deploy/Dockerfile, deploy/ursa.service and the benchmarks, and Node accepts them', () => {
    const docker = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');
    const unit = readFileSync(join(ROOT, 'deploy/ursa.service'), 'utf8');
    const options = /^\s+NODE_OPTIONS=(\S+) \\$/m.exec(docker)?.[1];
    expect(options).toMatch(/^--max-semi-space-size=\d+$/);
    expect(unit).toMatch(new RegExp(`^Environment=NODE_OPTIONS=${options}$`, 'm'));
    const bench = readFileSync(join(ROOT, 'bench/workers/processes.mjs'), 'utf8');
    expect(/^export const DEPLOYED_NODE_OPTIONS = \['(\S+)'\];$/m.exec(bench)?.[1]).toBe(options);
    const run = spawnSync(process.execPath, ['-e', ''], { env: { ...process.env, NODE_OPTIONS: options } });
    expect(run.status, String(run.stderr)).toBe(0);
  });
});
