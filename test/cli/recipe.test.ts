import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';

// Issue #23 item 4: `ursa recipe` on a local store; against a server: test/cli/remote.test.ts.
describe('ursa recipe', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-recipe-'));
  });
  afterEach(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it('sets a recipe from standard input with -f -, and prints it back', async () => {
    const stdin = ['description: Say hello', 'engine: shell', 'command: [echo, hello]'];
    expect(await ursa(['recipe', 'set', 'hello', '-f', '-', '--as', 'ada'], { cwd, stdin })).toEqual({
      code: 0,
      stdout: 'created _vance/recipes/hello.yaml (version 1)\n',
      stderr: '',
    });
    expect((await ursa(['recipe', 'get', 'hello'], { cwd })).stdout).toBe(`${stdin.join('\n')}\n`);
    const json = JSON.parse((await ursa(['recipe', 'get', 'hello', '--json'], { cwd })).stdout);
    expect(json).toMatchObject({
      name: 'hello',
      engine: 'shell',
      source: 'project',
      version: 1,
      createdBy: 'ada',
    });
  });

  it('refuses a broken recipe with the field and writes nothing; a missing file or recipe exits 2', async () => {
    const refused = await ursa(['recipe', 'set', 'hello', '-f', '-'], {
      cwd,
      stdin: ['description: Say hello', 'engine: shell'],
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/command: is required when engine is shell.*\[RECIPE_INVALID\]/s);
    expect((await ursa(['recipe', 'list'], { cwd })).stdout).not.toContain('hello');
    expect(await ursa(['recipe', 'set', 'hello', '-f', 'nope.yaml'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ursa: --file: cannot read "nope.yaml" [ARGUMENT_INVALID]\n',
    });
    expect(await ursa(['recipe', 'delete', 'hello'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ursa: recipe "hello" does not exist in default/demo [NOT_FOUND]\n',
    });
  });
});
