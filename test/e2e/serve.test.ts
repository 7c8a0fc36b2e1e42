import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { cli, eventually, serve } from '../support/server.js';

// issue #7, Done when: `ursa serve` as a real process on a free port, driven by the CLI in --url mode.
describe('ursa serve with the CLI in --url mode', () => {
  it('sets, lists, fires and reads runs over HTTP; keeps tenants apart; stops on SIGTERM', {
    timeout: 30_000,
  }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-e2e-'));
    const db = join(cwd, 'ursa.db');
    writeFileSync(
      join(cwd, 'hb.yaml'),
      'description: e2e\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: noop\n',
    );
    const server = await serve(cwd, db);
    let secret = '';
    try {
      // The first start made an admin token for all tenants and printed it once.
      const line = /^ursa: created an admin token for all tenants .*: (ursa_[A-Za-z0-9_-]{43})$/m.exec(
        server.output().stderr,
      );
      expect(line).not.toBeNull();
      secret = line?.[1] as string;
      expect(server.output().stdout).toContain(`"url":"${server.url}"`);
      const remote = ['--url', server.url, '--token', secret, '--tenant', 'acme', '--project', 'ops'];

      expect(await cli(['set', 'hb', '-f', 'hb.yaml', ...remote], cwd)).toEqual({
        code: 0,
        stdout: 'created _vance/scheduler/hb.yaml (version 1)\n',
        stderr: '',
      });
      const list = await cli(['list', ...remote], cwd);
      expect(list.code).toBe(0);
      expect(list.stdout.split('\n')[1]).toBe(
        'hb    cron 0 0 0 1 1 *  UTC       yes      2027-01-01T00:00:00Z  -',
      );
      const fire = await cli(['fire', 'hb', '--json', ...remote], cwd);
      expect([fire.code, fire.stderr]).toEqual([0, '']);
      const { correlationId, logPath } = JSON.parse(fire.stdout) as {
        correlationId: string;
        logPath: string;
      };
      expect(correlationId).toMatch(/^run_[0-9a-f-]{36}$/);
      // The fire waited for the server's worker to judge the run (issue #23): it started, or already ran.
      expect(['running', 'ended']).toContain((JSON.parse(fire.stdout) as { state: string }).state);

      // The server's worker runs the fired run in the background: poll its runs, bounded.
      const run = await eventually(
        async () => {
          const runs = await cli(['runs', 'hb', '--json', ...remote], cwd);
          expect(runs.code).toBe(0);
          const found = (JSON.parse(runs.stdout) as { correlationId: string; outcome: string }[]).find(
            (r) => r.correlationId === correlationId,
          );
          return found?.outcome === 'completed' ? found : undefined;
        },
        'the fired run completed',
        10_000,
      );
      expect(run).toMatchObject({ scheduler: 'hb', trigger: 'manual', logPath });
      const text = await cli(['runs', 'hb', ...remote], cwd);
      expect(text.stdout).toMatch(
        /^OCCURRENCE +STATE +OUTCOME +DURATION +TRIGGER +RUN LOG\n\S+Z {2}ended {2}completed {2}\s*\d+ ms {2}manual {3}_vance\/logs\/scheduler\/hb\/\S+\.md\n$/,
      );
      expect((await cli(['doc', 'cat', logPath, ...remote], cwd)).stdout).toContain(correlationId);
      expect(await (await fetch(`${server.url}/metrics`)).text()).toContain(
        'ursa_runs_total{outcome="completed",trigger="manual"} 1',
      );

      // A token of another tenant, made by the operator beside the running server, sees nothing of acme.
      const other = await cli(
        ['token', 'create', '--db', db, '--tenant', 'other', '--role', 'admin', '--json'],
        cwd,
      );
      const otherSecret = (JSON.parse(other.stdout) as { secret: string }).secret;
      const hidden = ['--url', server.url, '--token', otherSecret, '--tenant', 'acme', '--project', 'ops'];
      expect(await cli(['list', ...hidden], cwd)).toEqual({
        code: 2,
        stdout: '',
        stderr: 'ursa: no such resource [NOT_FOUND]\n',
      });

      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
    expect(server.output().stdout).toContain('"msg":"stopped"');

    // A second start on the same store makes no new token; the first one still works.
    const again = await serve(cwd, db);
    try {
      expect(again.output().stderr).not.toContain('created an admin token');
      const list = await cli(
        ['list', '--url', again.url, '--token', secret, '--tenant', 'acme', '--project', 'ops'],
        cwd,
      );
      expect([list.code, list.stdout.split('\n')[1]?.slice(0, 4)]).toEqual([0, 'hb  ']);
      again.child.kill('SIGTERM');
      expect(await again.exit).toBe(0);
    } finally {
      if (again.child.exitCode === null) again.child.kill('SIGKILL');
    }

    // Nothing listens there any more: the CLI says so and names the server.
    const gone = await cli(['list', '--url', again.url, '--token', 'ursa_x'], cwd);
    expect(gone).toEqual({
      code: 2,
      stdout: '',
      stderr: `ursa: cannot reach the Ursa server at ${again.url}: connection refused [STORE_UNAVAILABLE]\n`,
    });
  });
});
