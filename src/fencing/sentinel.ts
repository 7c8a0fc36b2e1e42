import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log.js';
import { hasProc, readStat } from '../processes/process-group.js';
import type { RunningGroup, RunningGroups } from './running-groups.js';
import { encodeGroup, encodeMessage, type SentinelMessage, type WatchedGroup } from './sentinel-list.js';

/** Options of a {@link Sentinel}. Durations are milliseconds. */
export interface SentinelOptions {
  /** SIGTERM → SIGKILL of each group the sentinel ends (the worker's fence grace). */
  readonly graceMs: number;
  /** The worker's id, on its log lines. */
  readonly workerId: string;
  readonly log: Logger;
  /** The sentinel's program; default {@link sentinelEntry}. */
  readonly entry?: string;
}

/**
 * A sentinel that dies is started again at once, unless the one before it also died within this
 * long of its start, milliseconds: then after a pause ({@link FIRST_RESTART_MS}, doubling with
 * each such death, up to {@link MAX_RESTART_MS}).
 */
const STEADY_MS = 10_000;
const FIRST_RESTART_MS = 100;
const MAX_RESTART_MS = 30_000;
/** Sentinels in a row that died young after which no more is started (the runtime cannot run one). */
const MAX_QUICK_DEATHS = 8;

/**
 * Whether this process can start a sentinel: `process.execPath` is Node.js itself. In an Electron
 * app or a single-executable bundle it is the application, which would start another of itself.
 */
export function canRunSentinel(): boolean {
  return process.release.name === 'node' && process.versions.electron === undefined && hasProc();
}
/** How long a clean stop waits for the sentinel to exit after its goodbye, milliseconds. */
const EXIT_WAIT_MS = 2000;

/**
 * The compiled program of the sentinel, `sentinel-main.js` beside this module (in `dist/fencing/`,
 * for `ursa serve`, `ursa worker` and `createUrsa` alike). This module run from its TypeScript
 * source (the test suite runs `src/`) uses the compiled one in `dist/`: build first.
 */
export function sentinelEntry(): string {
  const compiled = import.meta.url.endsWith('.ts')
    ? '../../dist/fencing/sentinel-main.js'
    : './sentinel-main.js';
  return fileURLToPath(new URL(compiled, import.meta.url));
}

/**
 * The worker's side of its sentinel (decisions §5 fencing, SECURITY.md "Process groups: no
 * orphans"): one small child process per worker, started detached (a session of its own: a
 * terminal's Ctrl-C or a signal to the worker's process group does not reach it), with a pipe on
 * its standard input and nothing else, unref'd (it never keeps the worker alive). The worker
 * writes to the pipe, synchronously in the turn its engine reports it, each process group its runs
 * and workflow steps start, with its leader's start time, and each whose engine returned. When the
 * worker dies, whatever kills it, the kernel closes the pipe: the sentinel then ends every group
 * still listed (SIGTERM, the grace, SIGKILL; never a group whose leader's start time changed) and
 * exits, on any host, with no other worker needed. A clean {@link stop} says goodbye first (the
 * runs have ended by then), and the sentinel exits signalling nothing.
 *
 * A sentinel that dies while the worker lives is logged at warn and started again, with the groups
 * running then on its command line (so it knows them from its exec on): at once, unless the one
 * before it also died within 10 s of its start, then after a pause from 100 ms doubling up to 30 s;
 * after 8 such deaths in a row, no more. It never stops the worker: the leftovers a later worker
 * ends at its start stay the second line. Only where `/proc` can verify a group (Linux) and the
 * runtime is Node.js itself (not an Electron app or a single-executable bundle); elsewhere none is
 * started.
 */
export class Sentinel {
  // The groups told to the sentinel, by `<processId> <pgid>`: told again to a new one.
  readonly #watched = new Map<string, WatchedGroup>();
  #child: ChildProcess | undefined;
  #startedAt = 0;
  // Sentinels in a row that died within STEADY_MS of their start.
  #quickDeaths = 0;
  #restart: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #started = false;
  #stopped = false;

  constructor(
    private readonly groups: RunningGroups,
    private readonly options: SentinelOptions,
  ) {}

  /** The sentinel's pid while one runs (for logs and tests). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Starts the sentinel and follows the groups from now on (those running now first). Calling it
   * again does nothing; it does nothing where `/proc` is missing, or the program is (logged).
   */
  start(): void {
    if (this.#started || this.#stopped || !hasProc()) return;
    this.#started = true;
    if (!canRunSentinel()) {
      this.options.log.warn(
        { worker: this.options.workerId },
        'this runtime is not Node.js itself, so no sentinel is started: processes of this worker are ended after its death only by a later worker on this host',
      );
      return;
    }
    const entry = this.options.entry ?? sentinelEntry();
    if (!existsSync(entry)) {
      this.options.log.warn(
        { worker: this.options.workerId, entry },
        'the sentinel program is missing (build the package): processes of this worker are ended after its death only by a later worker on this host',
      );
      return;
    }
    for (const group of this.groups.list()) this.#added(group);
    this.#unsubscribe = this.groups.subscribe((change) => {
      if (change.kind === 'added') this.#added(change.group);
      else this.#removed(change.group);
    });
    this.#spawn(entry);
  }

  /**
   * A clean stop, once the worker's runs have ended: says goodbye, closes the pipe and waits (up to
   * 2 s) for the sentinel to exit; it signals nothing. No sentinel is started again.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#restart);
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, EXIT_WAIT_MS);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    child.stdin?.end(encodeMessage({ kind: 'goodbye' }));
    await exited;
  }

  #added({ processId, pgid }: RunningGroup): void {
    // In the engine's own turn: the leader has not been reaped yet. A group whose start time cannot
    // be read cannot be verified later either; only a later worker's leftovers can end it.
    const leaderStartTicks = readStat(pgid)?.startTicks;
    if (leaderStartTicks === undefined) return;
    const group = { pgid, leaderStartTicks };
    this.#watched.set(`${processId} ${pgid}`, group);
    this.#send({ kind: 'added', group });
  }

  #removed({ processId, pgid }: RunningGroup): void {
    const key = `${processId} ${pgid}`;
    const group = this.#watched.get(key);
    if (group === undefined) return;
    this.#watched.delete(key);
    this.#send({ kind: 'removed', group });
  }

  // Written at once: a pipe's write goes to the kernel in this call, so a worker killed right after
  // it has still told its sentinel.
  #send(message: SentinelMessage): void {
    this.#child?.stdin?.write(encodeMessage(message));
  }

  #spawn(entry: string): void {
    let child: ChildProcess;
    try {
      // The groups running now are on its command line: it knows them from its exec on, before
      // this process could write a word to it (or die).
      const running = [...this.#watched.values()].map(encodeGroup);
      child = spawn(process.execPath, [entry, String(this.options.graceMs), ...running], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
        // Nothing of the worker's environment (NODE_OPTIONS, a run's URSA_* variables).
        env: {},
        cwd: '/',
      });
    } catch (error) {
      this.#died(undefined, error);
      return;
    }
    this.#child = child;
    this.#startedAt = performance.now();
    child.unref();
    // The pipe is a socket: unref'd too, or it would keep the worker alive.
    (child.stdin as Socket | null)?.unref();
    // A write to a sentinel that died: its exit says so.
    child.stdin?.on('error', () => {});
    let gone = false;
    const died = (error?: unknown) => {
      if (gone) return;
      gone = true;
      this.#died(child, error);
    };
    child.once('error', died);
    child.once('exit', () => died());
  }

  #died(child: ChildProcess | undefined, error: unknown): void {
    if (this.#stopped || (child !== undefined && this.#child !== child)) return;
    this.#child = undefined;
    const lived = child === undefined ? 0 : performance.now() - this.#startedAt;
    this.#quickDeaths = lived >= STEADY_MS ? 0 : this.#quickDeaths + 1;
    if (this.#quickDeaths > MAX_QUICK_DEATHS) {
      this.options.log.error(
        { worker: this.options.workerId, pid: child?.pid, code: child?.exitCode, err: error },
        "this worker's sentinel keeps ending as it starts; no more is started: processes of this worker are ended after its death only by a later worker on this host",
      );
      return;
    }
    const restartMs =
      this.#quickDeaths <= 1 ? 0 : Math.min(FIRST_RESTART_MS * 2 ** (this.#quickDeaths - 2), MAX_RESTART_MS);
    this.options.log.warn(
      {
        worker: this.options.workerId,
        pid: child?.pid,
        code: child?.exitCode,
        signal: child?.signalCode,
        err: error,
        restartInMs: restartMs,
      },
      "this worker's sentinel ended: starting a new one (until it runs, processes of this worker are ended after its death only by a later worker on this host)",
    );
    this.#restart = setTimeout(() => {
      if (!this.#stopped) this.#spawn(this.options.entry ?? sentinelEntry());
    }, restartMs);
    this.#restart.unref();
  }
}
