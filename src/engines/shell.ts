import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { UrsaError } from '../errors/index.js';
import { DEFAULT_GRACE_MS, terminateGroup } from '../processes/group-ending.js';
import { groupAlive, signalGroup } from '../processes/process-group.js';
import { formatInstant } from '../time/instant.js';
import { type Engine, type EngineRequest, type EngineResult, PROGRESS_INTERVAL_MS } from './engine.js';
import { OutputTail } from './output-tail.js';
import { stopReason } from './stop-reason.js';

/** Options of {@link createShellEngine}. Every field is optional. */
export interface ShellEngineOptions {
  /**
   * Milliseconds between SIGTERM and SIGKILL when a run's process group is killed (timeout, stop),
   * and how long output pipes may stay open after the command exited (at least 100 ms). Integer
   * from 0 to 2^31−1; default 2000.
   */
  readonly killGraceMs?: number;
  /**
   * Bytes kept from the end of standard output and, separately, of standard error for the run log
   * (`EngineResult.output` / `errorOutput`). Integer from 0 to 2^31−1; default 8192.
   */
  readonly outputTailBytes?: number;
  /**
   * Where the base variables ({@link SHELL_BASE_ENV}) are taken from, read at each run;
   * default `process.env`. Nothing else from it reaches the command.
   */
  readonly env?: NodeJS.ProcessEnv;
}

/** The variables a command inherits from the worker's environment, when set there; nothing else is. */
export const SHELL_BASE_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

const DEFAULT_OUTPUT_TAIL_BYTES = 8192;
/** Longest delay `setTimeout` honours; a larger one would fire after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;
/** Least time output pipes get after the command exited, so a small `killGraceMs` cannot cut output. */
const MIN_DRAIN_MS = 100;

/**
 * The environment variable a param is exported as: `URSA_PARAM_` and the name upper-cased, every
 * character outside `[A-Z0-9_]` replaced by `_` (one `_` per code point), e.g. `max-retries` →
 * `URSA_PARAM_MAX_RETRIES`. Two names that map to one variable: the later param in the object wins
 * (both stay intact in the stdin document).
 */
export function paramEnvName(name: string): string {
  return `URSA_PARAM_${name.toUpperCase().replace(/[^A-Z0-9_]/gu, '_')}`;
}

/**
 * The complete environment of a run (decisions §6): the base variables set in `base`, the run's
 * context as `URSA_TENANT`, `URSA_PROJECT`, `URSA_SCHEDULER`, `URSA_CORRELATION_ID`,
 * `URSA_FENCING_TOKEN` and `URSA_ATTEMPT` (decimal integers: the fencing token of the run's
 * attempt and its number, see `EngineRequest.context`; left out when the request has none),
 * `URSA_SCHEDULED_FOR` (ISO-8601 UTC), `URSA_PROCESS_ID`, `URSA_RUN_AS`, `TRACEPARENT` (the run's
 * span, when tracing is on), and each param as
 * {@link paramEnvName}: a string verbatim, any other value as JSON; a param whose value has no JSON
 * form (`undefined`, a function) is left out.
 *
 * @throws UrsaError `ARGUMENT_INVALID` (field `params.<name>`) when a param value holds a NUL
 *   character or cannot be written as JSON (a BigInt, a cycle); the shell engine reports its message
 *   as the run's failure reason and starts nothing.
 */
export function shellEnvironment(request: EngineRequest, base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of SHELL_BASE_ENV) {
    const value = base[key];
    if (value !== undefined) env[key] = value;
  }
  const { context } = request;
  env.URSA_TENANT = context.tenant;
  env.URSA_PROJECT = context.project;
  env.URSA_SCHEDULER = context.scheduler;
  env.URSA_CORRELATION_ID = context.correlationId;
  if (context.fencingToken !== undefined) env.URSA_FENCING_TOKEN = String(context.fencingToken);
  if (context.attempt !== undefined) env.URSA_ATTEMPT = String(context.attempt);
  env.URSA_SCHEDULED_FOR = formatInstant(context.scheduledFor);
  env.URSA_PROCESS_ID = request.processId;
  env.URSA_RUN_AS = context.runAs;
  // W3C trace context's environment form, read by OpenTelemetry SDKs (issue #26 item 3).
  if (context.traceparent !== undefined) env.TRACEPARENT = context.traceparent;
  for (const [name, value] of Object.entries(request.params)) {
    const text = typeof value === 'string' ? value : paramJson(name, value);
    if (text === undefined) continue;
    if (text.includes('\0')) {
      throw paramError(name, value, 'holds a NUL character, which an environment variable cannot');
    }
    env[paramEnvName(name)] = text;
  }
  return env;
}

function paramJson(name: string, value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw paramError(name, value, `cannot be written as JSON: ${(error as Error).message}`);
  }
}

function paramError(name: string, value: unknown, problem: string): UrsaError {
  const field = `params.${name}`;
  return new UrsaError('ARGUMENT_INVALID', `${field}: ${problem}`, {
    field,
    value,
    allowed: 'a value with a JSON form and no NUL character',
  });
}

/**
 * Creates the `shell` engine (decisions §2, §6). A run executes `recipe.command` as an argv array
 * (`command[0]` looked up on the run's `PATH`, never through a shell) in a process group of its own,
 * with the environment of {@link shellEnvironment} and, on standard input, the JSON document
 * `{"initialMessage": <string|null>, "params": {...}}` followed by end-of-file.
 *
 * Right after the start, `request.spawned` is called with the group's id (the child's pid), so
 * that the worker can record the group and end it should the worker die (decisions §5 fencing).
 *
 * The run ends when the command has exited, its output pipes are closed and no process of its
 * group runs any more (a run's process group never outlives the run):
 * - exit code 0 → `done`; another code → `failed`, reason `exit code N`; a signal it did not get from
 *   the engine → `failed`, reason `killed by SIGxxx`. `exitCode` is set whenever there was one.
 * - `recipe.timeoutMs` (positive milliseconds; absent, or above 2^31−1, means no limit) passed →
 *   the group gets SIGTERM, then SIGKILL after `killGraceMs`; `failed`, reason `timeout after N ms`.
 * - `request.signal` aborted → the group is killed the same way; `stopped`, reason the abort reason
 *   when it is a string, else `stopped`. An already aborted signal starts nothing.
 * - The command cannot be started → `failed`, reason `cannot start "<command[0]>": <OS code>`
 *   (e.g. `ENOENT`); an empty or missing command → `failed`, reason `recipe has no command`.
 * - Processes of the group still running when the command exited (a background child, its output
 *   redirected or not) get SIGTERM at once and SIGKILL after `killGraceMs`; output pipes still open
 *   `killGraceMs` (at least 100 ms) after the exit are closed, so a stray child cannot hold a run open.
 * - The group is waited for after a SIGKILL for at most a second (a process in uninterruptible
 *   sleep cannot die sooner); then the run ends anyway.
 *
 * `output` and `errorOutput` are the last `outputTailBytes` bytes of each stream, as UTF-8. The
 * promise never rejects. POSIX only (process groups).
 *
 * @throws UrsaError `ARGUMENT_INVALID` when `killGraceMs` or `outputTailBytes` is not an integer from
 *   0 to 2^31−1.
 */
export function createShellEngine(options: ShellEngineOptions = {}): Engine {
  const killGraceMs = nonNegativeInteger('killGraceMs', options.killGraceMs, DEFAULT_GRACE_MS);
  const outputTailBytes = nonNegativeInteger(
    'outputTailBytes',
    options.outputTailBytes,
    DEFAULT_OUTPUT_TAIL_BYTES,
  );
  return {
    name: 'shell',
    run: async (request) => {
      const command = request.recipe.command;
      const file = command?.[0];
      if (command === undefined || file === undefined || file === '') return failed('recipe has no command');
      if (request.signal.aborted) return { status: 'stopped', reason: stopReason(request.signal) };
      let env: Record<string, string>;
      let stdin: string;
      try {
        env = shellEnvironment(request, options.env ?? process.env);
        stdin = JSON.stringify({ initialMessage: request.initialMessage ?? null, params: request.params });
      } catch (error) {
        return failed((error as Error).message);
      }
      return execute(file, command.slice(1), env, stdin, request, { killGraceMs, outputTailBytes });
    },
  };
}

interface Limits {
  readonly killGraceMs: number;
  readonly outputTailBytes: number;
}

/** Why the engine ended a run before the command ended by itself. */
type Cause =
  | { readonly kind: 'timeout'; readonly ms: number }
  | { readonly kind: 'stop'; readonly reason: string };

function execute(
  file: string,
  args: string[],
  env: Record<string, string>,
  stdin: string,
  request: EngineRequest,
  limits: Limits,
): Promise<EngineResult> {
  return new Promise((resolve) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(file, args, { detached: true, shell: false, env, stdio: 'pipe', windowsHide: true });
    } catch (error) {
      // Synchronous refusals, e.g. ERR_INVALID_ARG_VALUE for a NUL byte in an argument.
      resolve(failed(cannotStart(file, error)));
      return;
    }
    const pid = child.pid;
    if (pid !== undefined) {
      try {
        request.spawned?.(pid);
      } catch {
        // The caller's bookkeeping must not leave the process running unwatched: the run goes on.
      }
    }

    const { signal } = request;
    const stdout = new OutputTail(limits.outputTailBytes);
    const stderr = new OutputTail(limits.outputTailBytes);
    let cause: Cause | undefined;
    let exited = false;
    let settled = false;
    let deadline: NodeJS.Timeout | undefined;
    let drain: NodeJS.Timeout | undefined;
    let progress: NodeJS.Timeout | undefined;
    let groupEnding: Promise<unknown> | undefined;

    const killGroup = (sig: NodeJS.Signals): void => {
      if (pid !== undefined) signalGroup(pid, sig);
    };
    // SIGTERM to the group, SIGKILL after the grace, resolved once none of it runs (decisions §5:
    // a run's process group never outlives the run). The leader is this process's child, so the
    // group id cannot have been handed to anyone else while a member is left.
    const endTheGroup = (): Promise<unknown> => {
      if (pid === undefined) return Promise.resolve();
      groupEnding ??= terminateGroup(pid, { graceMs: limits.killGraceMs });
      return groupEnding;
    };
    const terminate = (why: Cause): void => {
      if (exited || cause !== undefined) return;
      cause = why;
      void endTheGroup();
    };
    const onAbort = (): void => terminate({ kind: 'stop', reason: stopReason(signal) });
    const settle = (result: EngineResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(drain);
      clearInterval(progress);
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };

    // The tails so far, reported at most once an interval and only when they grew.
    let fresh = false;
    if (request.progress !== undefined) {
      const report = request.progress;
      progress = setInterval(() => {
        if (!fresh) return;
        fresh = false;
        try {
          report({ output: stdout.text(), errorOutput: stderr.text() });
        } catch {
          // The caller's bookkeeping must not stop the run.
        }
      }, PROGRESS_INTERVAL_MS).unref();
    }
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      fresh = true;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      fresh = true;
    });
    // EPIPE and the like: a command need not read its standard input.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);

    child.on('error', (error) => {
      // Only a failed start ends the run; a later error (e.g. from kill) changes nothing.
      if (child.pid === undefined) settle(failed(cannotStart(file, error)));
    });
    child.on('exit', () => {
      exited = true;
      clearTimeout(deadline);
      // The command is done: what is left of its group (a background child, output redirected or
      // not) is ended with it.
      if (pid !== undefined && groupAlive(pid)) void endTheGroup();
      drain = setTimeout(
        () => {
          // Pipes held open from outside the group (a child that left it) are cut.
          killGroup('SIGKILL');
          child.stdout.destroy();
          child.stderr.destroy();
        },
        Math.max(limits.killGraceMs, MIN_DRAIN_MS),
      );
    });
    child.on('close', (code, sig) => {
      const result = ending(code, sig, cause, stdout.text(), stderr.text());
      const rest = groupEnding ?? (pid !== undefined && groupAlive(pid) ? endTheGroup() : undefined);
      if (rest === undefined) settle(result);
      else void rest.then(() => settle(result));
    });

    signal.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = request.recipe.timeoutMs;
    if (timeoutMs !== undefined && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS) {
      deadline = setTimeout(() => terminate({ kind: 'timeout', ms: timeoutMs }), timeoutMs);
    }
  });
}

function ending(
  code: number | null,
  sig: NodeJS.Signals | null,
  cause: Cause | undefined,
  output: string,
  errorOutput: string,
): EngineResult {
  const exit = code === null ? {} : { exitCode: code };
  if (cause?.kind === 'stop')
    return { status: 'stopped', reason: cause.reason, ...exit, output, errorOutput };
  if (cause?.kind === 'timeout') {
    return { status: 'failed', reason: `timeout after ${cause.ms} ms`, ...exit, output, errorOutput };
  }
  if (code === 0) return { status: 'done', exitCode: 0, output, errorOutput };
  if (code !== null)
    return { status: 'failed', exitCode: code, reason: `exit code ${code}`, output, errorOutput };
  return { status: 'failed', reason: `killed by ${sig ?? 'an unknown signal'}`, output, errorOutput };
}

function failed(reason: string): EngineResult {
  return { status: 'failed', reason };
}

function cannotStart(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return `cannot start ${JSON.stringify(file)}: ${code}`;
}

function nonNegativeInteger(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (Number.isSafeInteger(value) && value >= 0 && value <= MAX_TIMER_MS) return value;
  throw new UrsaError('ARGUMENT_INVALID', `${field}: ${value} is not an integer from 0 to ${MAX_TIMER_MS}`, {
    field,
    value,
    allowed: `an integer from 0 to ${MAX_TIMER_MS}`,
  });
}
