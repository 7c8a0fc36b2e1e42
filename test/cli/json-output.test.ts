import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { fixedClock } from '../../src/time/clock.js';
import { ursa } from '../support/cli.js';

// issue #23 item 7: `--json` on every read command, each with a stable shape.

/**
 * The commands that are NOT read commands: they change state (write, delete, pause, fire a
 * process, revoke), run a service (serve, worker, mcp) or run a workflow in the foreground.
 * Every other command with an action is a read command: it only reads and prints, and so must
 * offer `--json`. (A write that answers something, such as fire or token create, may offer it too.)
 */
const NOT_READ = new Set([
  'serve',
  'worker',
  'mcp',
  'apply',
  'backup',
  'set',
  'delete',
  'pause',
  'resume',
  'refresh',
  'doc restore',
  'inbox read',
  'inbox answer',
  'process stop',
  'project pin',
  'project unpin',
  'project activate',
  'project suspend',
  'user add',
  'settings set',
  'settings unset',
  'token revoke',
  'recipe set',
  'recipe delete',
  'workflow set',
  'workflow run',
  'workflow stop',
]);

/** Every command of the program with an action of its own, by its path (`doc cat`). */
function commandsWithActions(): Map<string, Command> {
  const program = buildProgram({
    stdout: { write: () => true },
    stderr: { write: () => true },
    stdin: async function* () {},
    clock: fixedClock(0),
    env: {},
    cwd: process.cwd(),
  });
  const found = new Map<string, Command>();
  const visit = (command: Command, path: string[]): void => {
    // commander keeps the action handler private; a command without one only groups others.
    if ((command as unknown as { _actionHandler: unknown })._actionHandler !== null)
      found.set(path.join(' '), command);
    for (const sub of command.commands) visit(sub, [...path, sub.name()]);
  };
  for (const command of program.commands) visit(command, [command.name()]);
  return found;
}

describe('--json on every read command', () => {
  it('every command that is not a write, a service or a workflow run takes --json', () => {
    const commands = commandsWithActions();
    // The list above names only commands there are, so it cannot hide a renamed one.
    for (const name of NOT_READ) expect(commands.has(name), name).toBe(true);
    const reads = [...commands.keys()].filter((name) => !NOT_READ.has(name));
    expect(reads).toEqual(expect.arrayContaining(['list', 'get', 'validate', 'doc cat', 'workflow status']));
    const missing = reads.filter((name) => !commands.get(name)?.options.some((o) => o.long === '--json'));
    expect(missing).toEqual([]);
  });
});

const WORKFLOW = 'description: one step\nsteps:\n  - name: only\n    recipe: noop\n';

let cwd: string | undefined;
afterEach(() => {
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
  cwd = undefined;
});

describe('the --json outputs added for issue #23', () => {
  it('doc cat --json prints the document as REST gives it', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-json-'));
    expect((await ursa(['apply', resolve(import.meta.dirname, '../../examples/demo')], { cwd })).code).toBe(
      0,
    );
    const run = await ursa(['doc', 'cat', '_vance/scheduler/heartbeat.yaml', '--json'], { cwd });
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(Object.keys(doc).sort()).toEqual([
      'body',
      'createdBy',
      'expiresAt',
      'path',
      'updatedAt',
      'version',
    ]);
    expect(doc).toMatchObject({ path: '_vance/scheduler/heartbeat.yaml', version: 1, expiresAt: null });
    expect(doc.body).toContain('cron: "*/10 * * * * *"');
  });

  it('workflow list, get and status --json print what REST answers', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-json-'));
    writeFileSync(join(cwd, 'one.yaml'), WORKFLOW);
    expect((await ursa(['workflow', 'set', 'one', 'one.yaml'], { cwd })).code).toBe(0);
    const list = JSON.parse((await ursa(['workflow', 'list', '--json'], { cwd })).stdout);
    expect(list).toEqual({
      workflows: [
        {
          path: '_vance/workflows/one.yaml',
          version: 1,
          createdBy: 'admin',
          updatedAt: '2026-03-28T12:00:00Z',
          expiresAt: null,
        },
      ],
    });
    const got = JSON.parse((await ursa(['workflow', 'get', 'one', '--json'], { cwd })).stdout);
    expect(got).toMatchObject({ path: '_vance/workflows/one.yaml', version: 1, body: WORKFLOW });
    const started = await ursa(['workflow', 'run', 'one'], { cwd });
    const id = /^started workflow run ([0-9a-f]{8})\n/.exec(started.stdout)?.[1] as string;
    const status = JSON.parse((await ursa(['workflow', 'status', id, '--json'], { cwd })).stdout);
    expect(status).toMatchObject({
      workflowRunId: id,
      workflow: 'one',
      status: 'completed',
      steps: [{ name: 'only', recipe: 'noop', status: 'completed' }],
    });
  });

  it('validate --json prints the verdict; an invalid file exits 2 with its code and issues', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-json-'));
    writeFileSync(join(cwd, 'good.yaml'), 'description: d\ncron: "0 0 9 * * *"\nrecipe: noop\n');
    writeFileSync(join(cwd, 'bad.yaml'), 'description: d\ncron: "0 9 * * *"\nrecipe: noop\n');
    const good = await ursa(['validate', 'good.yaml', '--json'], { cwd });
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toEqual({
      file: 'good.yaml',
      kind: 'scheduler',
      valid: true,
      summary: 'cron "0 0 9 * * *" in UTC',
      store: null,
      code: null,
      issues: [],
    });
    const bad = await ursa(['validate', 'bad.yaml', '--json'], { cwd });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      valid: false,
      summary: null,
      code: 'SCHEDULER_INVALID',
      issues: [{ path: 'cron', message: expect.stringContaining('"0 0 9 * * *"') }],
    });
  });
});
