import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';
import { projectFolder, shellRecipe } from '../support/project.js';

const WORKFLOW = `description: Count, then report
parameters:
  n: "3"
steps:
  - name: count
    recipe: say
    params: { text: "counted \${{ params.n }}" }
  - name: report
    recipe: say
    params: { text: "report: \${{ steps.count.output | strip }}" }
`;

// Issue #10 item 5: `ursa workflow set|list|run|status` on a local store.
describe('ursa workflow', () => {
  it('sets a workflow, runs it in the foreground with --param, and prints each step with its output', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-workflow-'));
    const dir = projectFolder({
      '_vance/recipes/say.yaml': shellRecipe('printf "%s\\n" "$URSA_PARAM_TEXT"'),
    });
    expect((await ursa(['apply', dir], { cwd })).code).toBe(0);
    writeFileSync(join(cwd, 'count.yaml'), WORKFLOW);
    expect(await ursa(['workflow', 'set', 'count', 'count.yaml'], { cwd })).toEqual({
      code: 0,
      stdout: 'created _vance/workflows/count.yaml (v1)\n',
      stderr: '',
    });
    expect((await ursa(['workflow', 'list'], { cwd })).stdout).toBe('_vance/workflows/count.yaml  v1\n');

    const run = await ursa(['workflow', 'run', 'count', '--param', 'n=7'], { cwd });
    expect(run.code).toBe(0);
    const id = /^started workflow run ([0-9a-f]{8})\n/.exec(run.stdout)?.[1];
    expect(id).toBeDefined();
    const report = [
      `workflow run ${id} (count): completed`,
      '  count (say): completed',
      '    | counted 7',
      '  report (say): completed',
      '    | report: counted 7',
      '',
    ].join('\n');
    expect(run.stdout).toBe(`started workflow run ${id}\n${report}`);
    expect((await ursa(['workflow', 'status', id as string], { cwd })).stdout).toBe(report);
  });

  it('refuses an undeclared --param with its field path, exit status 1, and runs nothing', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-workflow-'));
    writeFileSync(join(cwd, 'count.yaml'), WORKFLOW);
    expect((await ursa(['workflow', 'set', 'count', 'count.yaml'], { cwd })).code).toBe(0);
    const refused = await ursa(['workflow', 'run', 'count', '--param', 'm=1'], { cwd });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('params.m: workflow count has no such parameter');
  });
});
