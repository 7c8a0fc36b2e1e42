import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineRequest } from '../../src/engines/engine.js';
import { createShellEngine } from '../../src/engines/shell.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// decisions §6: "`shell` engine: argv arrays only, never a shell string; params arrive as environment
// variables and, with initialMessage, as JSON on stdin." A param full of shell syntax must reach the
// process byte for byte and run nothing: each case below would create the canary file if any shell
// ever interpreted the value. The engine's other behaviour is in test/engines/shell.test.ts.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-hostile-'));
  dirs.push(dir);
  return dir;
}

/** Values that would run `touch <canary>` (or expand something) if a shell read them as code. */
function hostileValues(canary: string): Record<string, string> {
  const touch = `touch ${canary}`;
  return {
    substitution: `$(${touch})`,
    backticks: `\`${touch}\``,
    semicolon: `x; ${touch}`,
    pipe: `x | ${touch}`,
    and: `true && ${touch}`,
    or: `false || ${touch}`,
    background: `${touch} &`,
    single: `'; ${touch}; '`,
    double: `"; ${touch}; "`,
    newline: `x\n${touch}\n`,
    crlf: `x\r\n${touch}\r\n`,
    home: '$HOME',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal ${…} is the hostile input
    braces: '${HOME} ${PATH:-/tmp} ${#HOME}',
    arithmetic: '$((6*7))',
    ansiC: "$'\\x41'",
    tilde: '~ ~root',
    glob: '* ? [a-z] /*',
    redirect: `> ${canary}`,
    heredoc: `<<EOF\n${touch}\nEOF`,
    escapes: '\\n \\t \\\\ \\$HOME',
    dashes: '-n -e --help',
    percent: '%s %d %n',
    unicode: 'Grüße 😀 ‮reversed',
    spaces: '  leading and trailing  ',
    empty: '',
    long: `$(${touch})`.repeat(2000),
  };
}

function request(
  command: readonly string[],
  params: Record<string, unknown>,
  initialMessage?: string,
): EngineRequest {
  return {
    processId: 'proc-hostile',
    recipe: {
      name: 'hostile',
      description: 'hostile params',
      engine: 'shell',
      params: {},
      command,
      url: undefined,
      headers: undefined,
      secretHeaders: undefined,
      timeoutMs: undefined,
      source: 'project',
    },
    params,
    initialMessage,
    context: {
      tenant: 'acme',
      project: 'ops',
      scheduler: 'hostile',
      correlationId: 'run_hostile',
      scheduledFor: Date.parse('2026-06-01T08:00:00Z'),
      runAs: 'alice',
    },
    signal: new AbortController().signal,
  };
}

describe('shell params arrive verbatim and are never interpreted (decisions §6)', () => {
  const shell = createShellEngine();

  it('writes each hostile param, read as "$URSA_PARAM_<NAME>" by sh, to a file byte for byte; the canary never appears', async () => {
    const dir = tempDir();
    const canary = join(dir, 'pwned');
    for (const [name, value] of Object.entries(hostileValues(canary))) {
      const out = join(dir, `${name}.out`);
      const env = `URSA_PARAM_${name.toUpperCase()}`;
      // The script quotes the variable as a careful author would; the file gets its exact bytes.
      const result = await shell.run(
        request(['sh', '-c', `printf '%s' "$${env}" > "$1"; printf '%s' "$${env}"`, 'sh', out], {
          [name]: value,
        }),
      );
      expect(result.status, name).toBe('done');
      expect(readFileSync(out).equals(Buffer.from(value, 'utf8')), name).toBe(true);
      // Standard output carries the same bytes (its tail: at most 8 KiB).
      expect(result.output, name).toBe(Buffer.from(value, 'utf8').subarray(-8192).toString('utf8'));
    }
    expect(existsSync(canary)).toBe(false);
  });

  it('runs nothing even when the script expands a param unquoted: word splitting and globbing, no command', async () => {
    const dir = tempDir();
    const canary = join(dir, 'pwned');
    const values = hostileValues(canary);
    for (const name of ['substitution', 'backticks', 'semicolon', 'pipe', 'and', 'newline', 'redirect']) {
      const env = `URSA_PARAM_${name.toUpperCase()}`;
      const result = await shell.run(
        request(['sh', '-c', `cd "$1" && printf '[%s]' $${env}`, 'sh', tempDir()], { [name]: values[name] }),
      );
      expect(result.status, name).toBe('done');
      // The words of the value, printed; `touch` is a word here, never a command.
      const words = (values[name] as string).split(/[ \t\n]+/).filter((w) => w !== '');
      expect(result.output, name).toBe(words.map((w) => `[${w}]`).join(''));
    }
    expect(existsSync(canary)).toBe(false);
  });

  it('hands the params and initialMessage to standard input as JSON that parses back to the same strings', async () => {
    const dir = tempDir();
    const canary = join(dir, 'pwned');
    const params = hostileValues(canary);
    const initialMessage = `$(touch ${canary}) \`touch ${canary}\`; "quoted" 'single'\n`;
    const out = join(dir, 'stdin.json');
    const result = await shell.run(request(['sh', '-c', 'cat > "$1"', 'sh', out], params, initialMessage));
    expect(result.status).toBe('done');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ initialMessage, params });
    expect(existsSync(canary)).toBe(false);
  });

  it('passes argv as is: the command array never goes through a shell', async () => {
    const dir = tempDir();
    const canary = join(dir, 'pwned');
    const argv = Object.values(hostileValues(canary)).filter((v) => v !== '' && v.length < 1000);
    const result = await shell.run(
      request(
        [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', ...argv],
        {},
      ),
    );
    expect(result.status).toBe('done');
    expect(JSON.parse(result.output ?? '')).toEqual(argv);
    expect(existsSync(canary)).toBe(false);
  });

  it('refuses a param holding NUL, which no environment variable can carry, and starts nothing', async () => {
    const dir = tempDir();
    const canary = join(dir, 'pwned');
    const result = await shell.run(request(['sh', '-c', `touch ${canary}`], { p: 'a\u0000b' }));
    expect(result).toEqual({
      status: 'failed',
      reason: 'params.p: holds a NUL character, which an environment variable cannot',
    });
    expect(existsSync(canary)).toBe(false);
  });
});

describe('shell params from a scheduler document, through a real fire (decisions §6, spec §2)', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('delivers a YAML param full of shell syntax, merged over the recipe default, to the process byte for byte', async () => {
    const dir = tempDir();
    const canary = join(dir, 'pwned');
    const out = join(dir, 'param.out');
    const value = `$(touch ${canary}); \`touch ${canary}\` | touch ${canary} && "$HOME" 'x'\n$HOME\n`;
    t = await testRuntime('2026-06-01T08:00:00Z');
    const recipe = [
      'description: writes its param',
      'engine: shell',
      `command: ["sh", "-c", "printf '%s' \\"$URSA_PARAM_QUERY\\" > \\"$URSA_PARAM_OUT\\""]`,
      'params:',
      '  query: harmless default',
      '',
    ].join('\n');
    const params = `params:\n  query: ${JSON.stringify(value)}\n  out: ${JSON.stringify(out)}\n`;
    const entries = await applyDirectory(
      t.rt,
      projectFolder({
        '_vance/recipes/write.yaml': recipe,
        '_vance/scheduler/hostile.yaml': cronScheduler('*/10 * * * * *', 'write', params),
      }),
      'acme',
      'ops',
      libraryActor('alice'),
    );
    expect(entries.map((e) => e.status)).toEqual(['created', 'created']);
    const worker = t.worker();
    await worker.bootstrap();
    t.clock.set(Date.parse('2026-06-01T08:00:10.002Z'));
    expect(await worker.tick()).toMatchObject({ fired: 1 });
    await worker.executor.settled();
    const [run] = await t.rt.repos.runs.listForScheduler('acme', 'ops', 'hostile', 10);
    expect(run?.outcome).toBe('completed');
    expect(readFileSync(out).equals(Buffer.from(value, 'utf8'))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['param.out']);
  });
});
