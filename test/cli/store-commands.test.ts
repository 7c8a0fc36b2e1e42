import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';
import { cronScheduler, projectFolder, shellRecipe } from '../support/project.js';

const examples = resolve(import.meta.dirname, '../../examples/demo');

// issue #3: the CLI over the same service code, against a real SQLite file.
describe('ursa apply, validate, doc (and runs of a fresh store)', () => {
  it('applies examples/ into the default tenant and project, then lists and prints its documents', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-cli-'));
    const applied = await ursa(['apply', examples], { cwd });
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim().split('\n')).toEqual([
      'created   _vance/recipes/briefing.yaml',
      'created   _vance/recipes/heartbeat.yaml',
      'created   _vance/scheduler/heartbeat.yaml',
      'created   _vance/scheduler/morning-briefing.yaml',
    ]);
    expect((await ursa(['apply', examples], { cwd })).stdout).toContain(
      'unchanged _vance/scheduler/heartbeat.yaml',
    );
    const ls = await ursa(['doc', 'ls', '_vance/scheduler/'], { cwd });
    expect(ls.stdout).toBe('_vance/scheduler/heartbeat.yaml\n_vance/scheduler/morning-briefing.yaml\n');
    const cat = await ursa(['doc', 'cat', '_vance/scheduler/heartbeat.yaml'], { cwd });
    expect(cat.stdout).toContain('cron: "*/10 * * * * *"');
    const missing = await ursa(['doc', 'cat', '_vance/nothing.yaml'], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('[NOT_FOUND]');
    // Another project of the same store has none of them.
    expect((await ursa(['doc', 'ls', '', '--project', 'other'], { cwd })).stdout).toBe('');
    // Nothing has run yet: the run history (from the activity feed, test/cli/history.test.ts) is empty.
    const runs = await ursa(['runs', 'heartbeat', '--json'], { cwd });
    expect([runs.code, runs.stdout, runs.stderr]).toEqual([0, '[]\n', '']);
    expect((await ursa(['runs', 'heartbeat'], { cwd })).stdout).toBe(
      'no runs of "heartbeat" in default/demo\n',
    );
  });

  it('reports every broken document with its field paths and exits 2, applying the valid ones', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-cli-'));
    const dir = projectFolder({
      '_vance/recipes/ok.yaml': shellRecipe('true'),
      '_vance/scheduler/fine.yaml': cronScheduler('0 * * * * *', 'ok'),
      '_vance/scheduler/broken.yaml': 'description: d\ncron: "61 * * * * *"\nrecipe: ok\nextra: 1\n',
    });
    const run = await ursa(
      ['apply', dir, '--db', join(cwd, 'x.db'), '--tenant', 'acme', '--project', 'ops'],
      { cwd },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('invalid   _vance/scheduler/broken.yaml');
    expect(run.stdout).toMatch(/cron: .*61/);
    expect(run.stdout).toMatch(/extra: /);
    expect(run.stdout).toContain('created   _vance/scheduler/fine.yaml');
  });

  it('validates one file offline', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-cli-'));
    const ok = await ursa(['validate', join(examples, '_vance/scheduler/morning-briefing.yaml')], { cwd });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('a valid scheduler (cron "0 0 8 * * MON-FRI" in Europe/Berlin)');
    writeFileSync(join(cwd, 'bad.yaml'), 'description: x\ncron: "0 0 9 * * MON#6"\nrecipe: noop\n');
    const bad = await ursa(['validate', 'bad.yaml'], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('MON#6');
    expect(bad.stderr).toContain('[SCHEDULER_INVALID]');
  });
});
