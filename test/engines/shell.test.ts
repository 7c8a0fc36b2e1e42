import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createShellEngine,
  paramEnvName,
  SHELL_BASE_ENV,
  shellEnvironment,
} from '../../src/engines/shell.js';
import { isUrsaError, type UrsaError } from '../../src/errors/index.js';
import { readStat } from '../../src/processes/process-group.js';
import { node, request, tempDir, waitForFile, waitUntilGone } from './helpers.js';

const shell = createShellEngine();

/** Runs a child that prints its own environment as JSON, and returns that environment. */
async function childEnv(
  params: Record<string, unknown>,
  env?: NodeJS.ProcessEnv,
): Promise<Record<string, string>> {
  const engine = env === undefined ? shell : createShellEngine({ env });
  const result = await engine.run(
    request(node('process.stdout.write(JSON.stringify(process.env))'), { params }),
  );
  expect(result.status).toBe('done');
  return JSON.parse(result.output ?? '');
}

describe('shell engine: exit status (decisions §2, §6)', () => {
  it('ends done with exit code 0 and the output of both streams', async () => {
    const result = await shell.run(request(['sh', '-c', 'echo out; echo err >&2']));
    expect(result).toEqual({ status: 'done', exitCode: 0, output: 'out\n', errorOutput: 'err\n' });
  });

  it('ends failed with the exit code and reason `exit code 3` for a non-zero exit', async () => {
    const result = await shell.run(request(['sh', '-c', 'echo partial; echo broken >&2; exit 3']));
    expect(result).toEqual({
      status: 'failed',
      exitCode: 3,
      reason: 'exit code 3',
      output: 'partial\n',
      errorOutput: 'broken\n',
    });
  });

  it('ends failed with reason `killed by SIGKILL` when the command dies of a signal', async () => {
    const result = await shell.run(request(['sh', '-c', 'kill -9 $$']));
    expect(result).toEqual({ status: 'failed', reason: 'killed by SIGKILL', output: '', errorOutput: '' });
  });

  it('ends failed naming the command and ENOENT when it does not exist, without throwing', async () => {
    const result = await shell.run(request(['ursa-no-such-command-4242', '--flag']));
    expect(result).toEqual({ status: 'failed', reason: 'cannot start "ursa-no-such-command-4242": ENOENT' });
  });

  it('ends failed with the error code when the OS refuses the argv (a NUL byte)', async () => {
    const result = await shell.run(request(['printf', 'a\0b']));
    expect(result).toEqual({ status: 'failed', reason: 'cannot start "printf": ERR_INVALID_ARG_VALUE' });
  });

  it('ends failed with reason `recipe has no command` for a missing or empty command', async () => {
    const expected = { status: 'failed', reason: 'recipe has no command' };
    expect(await shell.run(request(undefined))).toEqual(expected);
    expect(await shell.run(request([]))).toEqual(expected);
    expect(await shell.run(request(['']))).toEqual(expected);
  });
});

describe('shell engine: argv and params arrive verbatim (decisions §6)', () => {
  it('passes argv to the program as is, never through a shell', async () => {
    const dir = tempDir();
    const argv = [`$(touch ${join(dir, 'pwned')})`, 'a b', '*', '"quoted"; ls', "it's"];
    const result = await shell.run(request(['printf', '[%s]', ...argv]));
    expect(result).toEqual({
      status: 'done',
      exitCode: 0,
      output: `[$(touch ${join(dir, 'pwned')})][a b][*]["quoted"; ls][it's]`,
      errorOutput: '',
    });
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
  });

  it('exports a param with shell metacharacters verbatim; a script that expands it runs nothing', async () => {
    const dir = tempDir();
    const hostile = `$(touch ${join(dir, 'pwned')}); echo "x" | cat \`id\` > /dev/null`;
    const result = await shell.run(
      request(['sh', '-c', 'printf "%s" "$URSA_PARAM_QUERY"'], { params: { query: hostile } }),
    );
    expect(result).toEqual({ status: 'done', exitCode: 0, output: hostile, errorOutput: '' });
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
  });

  it('exports strings verbatim and every other value as JSON; undefined is left out', async () => {
    const env = await childEnv({
      query: '$(rm -rf /); echo "x" | cat',
      multiline: 'line 1\nline 2\n',
      unicode: 'Grüße 😀',
      empty: '',
      count: 3,
      ratio: 0.5,
      enabled: false,
      nothing: null,
      tags: ['a', 'b'],
      nested: { a: { b: null } },
      skipped: undefined,
    });
    const params = Object.fromEntries(Object.entries(env).filter(([key]) => key.startsWith('URSA_PARAM_')));
    expect(params).toEqual({
      URSA_PARAM_QUERY: '$(rm -rf /); echo "x" | cat',
      URSA_PARAM_MULTILINE: 'line 1\nline 2\n',
      URSA_PARAM_UNICODE: 'Grüße 😀',
      URSA_PARAM_EMPTY: '',
      URSA_PARAM_COUNT: '3',
      URSA_PARAM_RATIO: '0.5',
      URSA_PARAM_ENABLED: 'false',
      URSA_PARAM_NOTHING: 'null',
      URSA_PARAM_TAGS: '["a","b"]',
      URSA_PARAM_NESTED: '{"a":{"b":null}}',
    });
  });

  it('gives the child only the base variables, the run context and the params', async () => {
    const env = await childEnv(
      { 'max-retries': 2 },
      {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: '/home/alice',
        LANG: 'C.UTF-8',
        TZ: 'UTC',
        LC_ALL: undefined,
        SECRET_TOKEN: 'must-not-leak',
        NODE_OPTIONS: '--inspect',
      },
    );
    expect(env).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/home/alice',
      LANG: 'C.UTF-8',
      TZ: 'UTC',
      URSA_TENANT: 'acme',
      URSA_PROJECT: 'web',
      URSA_SCHEDULER: 'nightly-report',
      URSA_CORRELATION_ID: 'corr-0001',
      URSA_SCHEDULED_FOR: '2026-03-28T12:00:00Z',
      URSA_PROCESS_ID: 'proc-42',
      URSA_RUN_AS: 'alice',
      URSA_PARAM_MAX_RETRIES: '2',
    });
  });

  it('takes the base variables from process.env by default, and nothing else from it', async () => {
    const env = await childEnv({});
    const inherited = Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('URSA_')));
    const expected = Object.fromEntries(
      SHELL_BASE_ENV.flatMap((key) => (process.env[key] === undefined ? [] : [[key, process.env[key]]])),
    );
    expect(inherited).toEqual(expected);
    expect(inherited.TZ).toBe('Australia/Sydney');
  });

  it('mangles param names: upper case, every character outside [A-Z0-9_] becomes `_`', () => {
    expect(paramEnvName('max-retries')).toBe('URSA_PARAM_MAX_RETRIES');
    expect(paramEnvName('dry.run')).toBe('URSA_PARAM_DRY_RUN');
    expect(paramEnvName('camelCase')).toBe('URSA_PARAM_CAMELCASE');
    expect(paramEnvName('with space')).toBe('URSA_PARAM_WITH_SPACE');
    expect(paramEnvName('9lives')).toBe('URSA_PARAM_9LIVES');
    expect(paramEnvName('already_OK_1')).toBe('URSA_PARAM_ALREADY_OK_1');
    expect(paramEnvName('émoji😀')).toBe('URSA_PARAM__MOJI_');
    expect(paramEnvName('$(x)')).toBe('URSA_PARAM___X_');
  });

  it('exports mangled names to the child; when two names collide the later param wins', async () => {
    const env = await childEnv({ 'dry.run': true, 'a-b': 'first', a_b: 'second', 'émoji😀': 'e' });
    const params = Object.fromEntries(Object.entries(env).filter(([key]) => key.startsWith('URSA_PARAM_')));
    expect(params).toEqual({ URSA_PARAM_DRY_RUN: 'true', URSA_PARAM_A_B: 'second', URSA_PARAM__MOJI_: 'e' });
  });

  it('fails, starting nothing, when a param holds a NUL or has no JSON form', async () => {
    const dir = tempDir();
    const command = ['sh', '-c', `touch ${join(dir, 'ran')}`];
    expect(await shell.run(request(command, { params: { bad: 'a\0b' } }))).toEqual({
      status: 'failed',
      reason: 'params.bad: holds a NUL character, which an environment variable cannot',
    });
    expect(await shell.run(request(command, { params: { big: 10n } }))).toEqual({
      status: 'failed',
      reason: 'params.big: cannot be written as JSON: Do not know how to serialize a BigInt',
    });
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('shellEnvironment throws ARGUMENT_INVALID naming the param for a NUL character', () => {
    let caught: unknown;
    try {
      shellEnvironment(request(['true'], { params: { bad: 'a\0b' } }), {});
    } catch (error) {
      caught = error;
    }
    expect(isUrsaError(caught, 'ARGUMENT_INVALID')).toBe(true);
    expect((caught as UrsaError).field).toBe('params.bad');
  });

  it('shellEnvironment formats URSA_SCHEDULED_FOR as ISO-8601 UTC with milliseconds when non-zero', () => {
    const base = request(['true']);
    const env = shellEnvironment(
      { ...base, context: { ...base.context, scheduledFor: Date.parse('2026-07-01T06:30:15.250+02:00') } },
      {},
    );
    expect(env.URSA_SCHEDULED_FOR).toBe('2026-07-01T04:30:15.250Z');
  });
});

describe('shell engine: standard input (decisions §6)', () => {
  it('writes {"initialMessage", "params"} as one JSON document, then end-of-file', async () => {
    const result = await shell.run(
      request(node('process.stdin.pipe(process.stdout)'), {
        initialMessage: 'Summarise "today"\n',
        params: { limit: 5, query: '$(id)' },
      }),
    );
    expect(result).toEqual({
      status: 'done',
      exitCode: 0,
      output: '{"initialMessage":"Summarise \\"today\\"\\n","params":{"limit":5,"query":"$(id)"}}',
      errorOutput: '',
    });
  });

  it('writes initialMessage null when there is none', async () => {
    const result = await shell.run(request(['cat']));
    expect(result).toEqual({
      status: 'done',
      exitCode: 0,
      output: '{"initialMessage":null,"params":{}}',
      errorOutput: '',
    });
  });

  it('ignores EPIPE when the child exits without reading standard input', async () => {
    const result = await shell.run(request(['sh', '-c', 'exit 0'], { initialMessage: 'x'.repeat(1 << 20) }));
    expect(result).toEqual({ status: 'done', exitCode: 0, output: '', errorOutput: '' });
  });
});

describe('shell engine: output tail', () => {
  it('keeps the last outputTailBytes bytes of each stream', async () => {
    const engine = createShellEngine({ outputTailBytes: 8 });
    const result = await engine.run(
      request(
        node(
          "process.stdout.write('a'.repeat(200000) + 'END'); process.stderr.write('e'.repeat(100) + 'ERR')",
        ),
      ),
    );
    expect(result).toEqual({ status: 'done', exitCode: 0, output: 'aaaaaEND', errorOutput: 'eeeeeERR' });
  });

  it('keeps the last bytes across many small writes', async () => {
    const engine = createShellEngine({ outputTailBytes: 16 });
    const result = await engine.run(
      request(node('for (let i = 0; i < 10000; i++) process.stdout.write(i + ",")')),
    );
    expect(result).toEqual({ status: 'done', exitCode: 0, output: ',9997,9998,9999,', errorOutput: '' });
  });

  it('keeps 8192 bytes by default', async () => {
    const result = await shell.run(
      request(node("process.stdout.write('b'.repeat(9000) + 'z'.repeat(8000))")),
    );
    expect(result.output).toBe('b'.repeat(192) + 'z'.repeat(8000));
  });

  it('drops the remains of a UTF-8 character cut by the tail', async () => {
    const engine = createShellEngine({ outputTailBytes: 5 });
    const result = await engine.run(request(node("process.stdout.write('x' + 'é'.repeat(10))")));
    expect(result.output).toBe('éé');
  });
});

describe('shell engine: timeout and stop kill the whole process group (decisions §6)', () => {
  // A grandchild in the background, holding the output pipes, writes its pid where the test finds it.
  const withGrandchild = (pidFile: string, rest: string): string[] => [
    'sh',
    '-c',
    `sleep 30 & echo $! > "$1.tmp" && mv "$1.tmp" "$1"; ${rest}`,
    'sh',
    pidFile,
  ];

  it('ends failed with `timeout after 300 ms` and kills the grandchild too', {
    timeout: 20_000,
  }, async () => {
    const pidFile = join(tempDir(), 'grandchild.pid');
    const result = await shell.run(request(withGrandchild(pidFile, 'wait'), { timeoutMs: 300 }));
    expect(result).toEqual({ status: 'failed', reason: 'timeout after 300 ms', output: '', errorOutput: '' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect((await waitUntilGone(pid)).code).toBe('ESRCH');
  });

  it('ends stopped with reason `stopped` when the signal aborts, and kills the group', {
    timeout: 20_000,
  }, async () => {
    const pidFile = join(tempDir(), 'grandchild.pid');
    const controller = new AbortController();
    const run = shell.run(request(withGrandchild(pidFile, 'wait'), { signal: controller.signal }));
    await waitForFile(pidFile);
    controller.abort();
    expect(await run).toEqual({ status: 'stopped', reason: 'stopped', output: '', errorOutput: '' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect((await waitUntilGone(pid)).code).toBe('ESRCH');
  });

  it('takes a string abort reason as the stop reason', async () => {
    const dir = tempDir();
    const controller = new AbortController();
    const run = shell.run(
      request(['sh', '-c', 'touch "$1"; exec sleep 30', 'sh', join(dir, 'ready')], {
        signal: controller.signal,
      }),
    );
    await waitForFile(join(dir, 'ready'));
    controller.abort('cancelPrevious');
    expect(await run).toEqual({ status: 'stopped', reason: 'cancelPrevious', output: '', errorOutput: '' });
  });

  it('sends SIGKILL after killGraceMs when the group ignores SIGTERM', async () => {
    const dir = tempDir();
    const controller = new AbortController();
    const engine = createShellEngine({ killGraceMs: 200 });
    const script = 'trap "" TERM; touch "$1"; while :; do sleep 1; done';
    const run = engine.run(
      request(['sh', '-c', script, 'sh', join(dir, 'ready')], { signal: controller.signal }),
    );
    await waitForFile(join(dir, 'ready'));
    controller.abort();
    expect(await run).toEqual({ status: 'stopped', reason: 'stopped', output: '', errorOutput: '' });
  });

  it('starts nothing when the signal is already aborted', async () => {
    const dir = tempDir();
    const controller = new AbortController();
    controller.abort();
    const result = await shell.run(
      request(['sh', '-c', 'touch "$1"', 'sh', join(dir, 'ran')], { signal: controller.signal }),
    );
    expect(result).toEqual({ status: 'stopped', reason: 'stopped' });
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('kills a background child that keeps the pipes open after the command exited', {
    timeout: 20_000,
  }, async () => {
    const pidFile = join(tempDir(), 'grandchild.pid');
    const engine = createShellEngine({ killGraceMs: 100 });
    const result = await engine.run(request(withGrandchild(pidFile, 'echo finished')));
    expect(result).toEqual({ status: 'done', exitCode: 0, output: 'finished\n', errorOutput: '' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect((await waitUntilGone(pid)).code).toBe('ESRCH');
  });
});

describe('shell engine: the process group never outlives the run (issue #20, decisions §5)', () => {
  const files: string[] = [];
  const marks = (file: string) =>
    existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  const marksFile = (): string => {
    const file = join(tempDir(), 'marks');
    files.push(file);
    return file;
  };
  // What a failing run left behind (its temporary folder goes after each test).
  afterEach(() => {
    for (const file of files.splice(0))
      for (const mark of marks(file)) {
        try {
          process.kill(Number(mark.split(' ')[1]), 'SIGKILL');
        } catch {
          // Gone.
        }
      }
  });
  // A background child, output redirected (so it holds no pipe of the run), that marks its start
  // and, on SIGTERM, its end; `ignore` makes it ignore SIGTERM instead.
  const straying = (file: string, rest: string, ignore = false): string[] => {
    const trap = ignore ? 'trap "" TERM' : 'trap \'echo "end $$" >> "$1"; exit 0\' TERM';
    const child = `${trap}; echo "start $$" >> "$1"; while :; do sleep 0.05; done`;
    const script = `sh -c '${child.replaceAll("'", "'\\''")}' sh "$1" >/dev/null 2>&1 & while [ ! -s "$1" ]; do sleep 0.01; done; ${rest}`;
    return ['sh', '-c', script, 'sh', file];
  };
  const pidOf = (mark: string | undefined) => Number(mark?.split(' ')[1]);

  it('reports the group it started through spawned: once, with the pid of the command', async () => {
    const groups: number[] = [];
    const result = await shell.run({
      ...request(['sh', '-c', 'echo $$']),
      spawned: (pgid) => groups.push(pgid),
    });
    expect(groups).toEqual([Number(result.output)]);
    const none: number[] = [];
    await shell.run({ ...request(['/no/such/command']), spawned: (pgid) => none.push(pgid) });
    expect(none).toEqual([]);
  });

  it('ends a background child that outlives the command, output redirected, before the run ends', {
    timeout: 20_000,
  }, async () => {
    const file = marksFile();
    const result = await shell.run(request(straying(file, 'echo finished')));
    expect(result).toEqual({ status: 'done', exitCode: 0, output: 'finished\n', errorOutput: '' });
    const [start, end] = marks(file);
    expect(end).toBe(`end ${pidOf(start)}`);
    expect((await waitUntilGone(pidOf(start))).code).toBe('ESRCH');
  });

  it('sends SIGKILL after killGraceMs to a background child that ignores SIGTERM, before the run ends', {
    timeout: 20_000,
  }, async () => {
    const file = marksFile();
    const engine = createShellEngine({ killGraceMs: 300 });
    const began = performance.now();
    const result = await engine.run(request(straying(file, 'exit 0', true)));
    expect(result.status).toBe('done');
    expect(performance.now() - began).toBeGreaterThanOrEqual(290);
    const [start] = marks(file);
    expect(readStat(pidOf(start))?.state ?? 'gone').toMatch(/^(gone|Z)$/u);
  });

  it('a timeout ends such a child, SIGTERM ignored, before the run ends', { timeout: 20_000 }, async () => {
    const file = marksFile();
    const engine = createShellEngine({ killGraceMs: 300 });
    const result = await engine.run(request(straying(file, 'exec sleep 30', true), { timeoutMs: 300 }));
    expect(result).toMatchObject({ status: 'failed', reason: 'timeout after 300 ms' });
    const [start] = marks(file);
    expect(readStat(pidOf(start))?.state ?? 'gone').toMatch(/^(gone|Z)$/u);
  });

  it('a stop ends the whole group, each member running its TERM trap before the run ends', {
    timeout: 20_000,
  }, async () => {
    const file = marksFile();
    const controller = new AbortController();
    const run = shell.run(request(straying(file, 'exec sleep 30'), { signal: controller.signal }));
    await waitForFile(file);
    controller.abort('shutdown');
    expect(await run).toMatchObject({ status: 'stopped', reason: 'shutdown' });
    const [start, end] = marks(file);
    expect(end).toBe(`end ${pidOf(start)}`);
  });
});

describe('createShellEngine options', () => {
  it('refuses a negative, fractional or too large option with ARGUMENT_INVALID', () => {
    for (const options of [{ killGraceMs: -1 }, { outputTailBytes: 1.5 }, { killGraceMs: 2 ** 31 }]) {
      let caught: unknown;
      try {
        createShellEngine(options);
      } catch (error) {
        caught = error;
      }
      expect(isUrsaError(caught, 'ARGUMENT_INVALID')).toBe(true);
    }
  });

  it('names the option and the allowed range in the error', () => {
    expect(() => createShellEngine({ killGraceMs: -1 })).toThrow(
      'killGraceMs: -1 is not an integer from 0 to 2147483647',
    );
  });

  it('is named shell', () => {
    expect(shell.name).toBe('shell');
  });
});
