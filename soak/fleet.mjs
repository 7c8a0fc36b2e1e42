import { fork } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Why a worker ended itself: its lease watchdog, at the fence deadline with requests in flight. */
export const SELF_FENCE = 'ended itself (lease watchdog)';

/** Whether a worker's log says its lease watchdog ended its process. */
function endedItself(logFile) {
  try {
    return readFileSync(logFile, 'utf8').includes('the worker process ends itself now');
  } catch {
    return false;
  }
}

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));

/** This environment without any URSA_* setting (a stray URSA_DB must not redirect a worker). */
function workerEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('URSA_')));
}

/**
 * The soak's worker processes (soak/worker.mjs). A slot is one worker role — `steady` (lives
 * through the soak; only in-process faults) or `chaos-N` (killed and restarted) — on one store;
 * each start of a slot is an incarnation with its own log file and engine-entries file in `dir`.
 * A slot whose process exits is started again after `restartDelay()` ms, until {@link stopAll}.
 */
export class Fleet {
  slots = [];
  stopping = false;
  /** Every exit: { slot, incarnation, code, signal, expected, at }. */
  exits = [];

  constructor({ dist, dir, seed, restartDelay, onMemory }) {
    this.dist = dist;
    this.dir = dir;
    this.seed = seed;
    this.restartDelay = restartDelay;
    this.onMemory = onMemory;
  }

  /**
   * A slot; `hold()`, when given, is awaited before each restart (a slot whose store connection is
   * cut starts again once it is restored: a start-up without a store is not the fault).
   */
  add({ name, role, db, exclusive, hold }) {
    const slot = {
      name,
      role,
      db,
      exclusive,
      hold,
      incarnation: 0,
      child: undefined,
      live: false,
      files: [],
    };
    this.slots.push(slot);
    return slot;
  }

  /** Starts a slot's next incarnation; resolves once it is ready (or rejects when it exits first). */
  start(slot) {
    slot.incarnation++;
    const tag = `${slot.name}-${slot.incarnation}`;
    const entries = join(this.dir, `entries-${tag}.txt`);
    const logFile = join(this.dir, `worker-${tag}.log`);
    slot.files.push({ entries, logFile });
    const config = {
      dist: this.dist,
      db: slot.db,
      entries,
      exclusive: slot.exclusive,
      seed: (this.seed + this.slots.indexOf(slot) * 7919 + slot.incarnation * 104_729) >>> 0,
    };
    const fd = openSync(logFile, 'w');
    const child = fork(WORKER, [JSON.stringify(config)], {
      execArgv: ['--expose-gc'],
      env: workerEnv(),
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    const incarnation = { slot, tag, child, pid: child.pid, startedAt: Date.now(), expected: undefined };
    slot.child = child;
    slot.current = incarnation;
    slot.live = false;
    const ready = new Promise((resolve, reject) => {
      child.on('message', (message) => {
        if (message.type === 'ready') {
          slot.live = true;
          resolve(incarnation);
        } else if (message.type === 'memory') this.onMemory?.(slot, message);
        else if (message.type === 'fault') incarnation.fired = message;
      });
      child.once('exit', (code, signal) => {
        // A worker whose event loop stayed stuck past its lease with engine calls in flight ends
        // itself (its lease watchdog, by design): an expected exit, counted on its own.
        if (incarnation.expected === undefined && signal === 'SIGKILL' && endedItself(logFile))
          incarnation.expected = SELF_FENCE;
        const exit = {
          slot: slot.name,
          tag,
          code,
          signal,
          expected: incarnation.expected,
          started: slot.live, // false: it exited during its start-up (bootstrap), before it was ready
          at: Date.now(),
        };
        slot.live = false;
        this.exits.push(exit);
        incarnation.exit = exit;
        reject(
          new Error(`${tag} exited (code ${code}, signal ${signal}) before it was ready:\n${tail(logFile)}`),
        );
        if (!this.stopping) {
          slot.restarting = new Promise((r) => setTimeout(r, this.restartDelay()))
            .then(() => slot.hold?.())
            .then(() => (this.stopping ? undefined : this.start(slot).catch(() => {})));
        }
      });
    });
    incarnation.ready = ready;
    incarnation.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    ready.catch(() => {});
    return ready;
  }

  live() {
    return this.slots.filter((slot) => slot.live);
  }

  /** Sends `message` to a live slot; false when it is not live. */
  send(slot, message) {
    if (!slot.live || !slot.child.connected) return false;
    slot.child.send(message);
    return true;
  }

  /**
   * Kills a live slot's process with `signal`, noting why (the exit is then expected). False when
   * not live, or for a SIGTERM to one already on its way out (a graceful stop takes seconds).
   */
  kill(slot, signal, why) {
    if (!slot.live || (signal === 'SIGTERM' && slot.current.expected !== undefined)) return false;
    slot.current.expected = why;
    slot.child.kill(signal);
    return true;
  }

  /** Resolves once every slot is live again (after the restarts in progress), or after `timeoutMs`. */
  async allLive(timeoutMs = 60_000) {
    const until = Date.now() + timeoutMs;
    while (this.slots.some((slot) => !slot.live) && Date.now() < until) await sleep(100);
    return this.slots.every((slot) => slot.live);
  }

  /** SIGTERM to every worker (graceful stop), then waits; one still running after `timeoutMs` is killed. */
  async stopAll(timeoutMs = 30_000) {
    this.stopping = true;
    await Promise.all(this.slots.map((slot) => slot.restarting));
    const slow = [];
    await Promise.all(
      this.slots.map(async (slot) => {
        const current = slot.current;
        if (current === undefined || current.exit !== undefined) return;
        current.expected = 'final stop';
        current.child.kill('SIGTERM');
        const timer = setTimeout(() => {
          slow.push(current.tag);
          current.child.kill('SIGKILL');
        }, timeoutMs);
        await current.exited;
        clearTimeout(timer);
      }),
    );
    return slow;
  }

  /** The warn and error lines of every incarnation's log, grouped by message, most frequent first. */
  problems() {
    const counts = new Map();
    for (const slot of this.slots) {
      for (const { logFile } of slot.files) {
        let text = '';
        try {
          text = readFileSync(logFile, 'utf8');
        } catch {
          continue;
        }
        for (const line of text.split('\n')) {
          if (line === '') continue;
          let key;
          try {
            const entry = JSON.parse(line);
            if (entry.level < 40) continue;
            key = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg}${entry.err?.message ? ` (${entry.err.message.slice(0, 100)})` : ''}`;
          } catch {
            key = `(not JSON) ${line.slice(0, 100)}`;
          }
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
      }
    }
    return [...counts.entries()]
      .map(([message, count]) => ({ message, count }))
      .sort((a, b) => b.count - a.count);
  }

  /** Kills whatever still runs (after an error in the driver). */
  killAll() {
    this.stopping = true;
    for (const slot of this.slots) if (slot.current?.exit === undefined) slot.child?.kill('SIGKILL');
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function tail(file) {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    return '';
  }
}
