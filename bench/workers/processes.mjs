import { spawn } from 'node:child_process';
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
const DIST_DIR = fileURLToPath(new URL('../../dist', import.meta.url));

/**
 * A private copy of dist/ as just built, for the worker processes: they start minutes into the
 * run, and a rebuild of dist/ meanwhile (someone else's `npm test`) must not change the code they
 * run. The copy lives inside bench/ (git ignores `dist/`), so its imports still resolve to Ursa's
 * node_modules and bench/package.json keeps it an ES module. Returns the CLI path and a cleanup.
 */
export function snapshotDist() {
  const root = mkdtempSync(join(BENCH_DIR, '.workers-'));
  cpSync(DIST_DIR, join(root, 'dist'), { recursive: true });
  return {
    main: join(root, 'dist', 'cli', 'main.js'),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The environment of a worker: this one without any URSA_* setting (a stray URSA_DB must not
 * redirect it), plus the benchmark's.
 */
function workerEnv(logLevel) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('URSA_')));
  return { ...env, URSA_LOG_LEVEL: logLevel, URSA_RUN_LOG_RETENTION_DAYS: '7' };
}

/**
 * The Node options Ursa's deployment files give a worker (NODE_OPTIONS in deploy/Dockerfile and
 * deploy/ursa.service): a larger young generation, which a worker under load collects far less
 * often (issue #24).
 */
export const DEPLOYED_NODE_OPTIONS = ['--max-semi-space-size=32'];

/**
 * Starts `count` real worker processes, `node <main> worker --db <location>` (`main`: the CLI of
 * {@link snapshotDist}) with {@link DEPLOYED_NODE_OPTIONS}, in `dir` (an empty folder: no ursa.yaml is read), each logging to its own
 * file there (`<name>-<k>.log`). `URSA_BENCH_WORKER_ARGS` adds Node options to each (e.g.
 * `--cpu-prof`), for analysis. With `args`, runs `node <main> <args>` instead: a peer's worker
 * script, say.
 */
export function startWorkers({ main, count, location, dir, logLevel, args, name = 'worker' }) {
  const workers = [];
  for (let k = 0; k < count; k++) {
    const logFile = join(dir, `${name}-${k + 1}.log`);
    const fd = openSync(logFile, 'w');
    const extra = (process.env.URSA_BENCH_WORKER_ARGS ?? '').split(' ').filter((a) => a !== '');
    const nodeArgs = args === undefined ? [...DEPLOYED_NODE_OPTIONS, ...extra] : extra;
    const argv = args ?? ['worker', '--db', location];
    const child = spawn(process.execPath, [...nodeArgs, main, ...argv], {
      cwd: dir,
      env: workerEnv(logLevel),
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    const worker = { child, pid: child.pid, logFile, spawnedAt: Date.now(), exit: undefined };
    worker.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        worker.exit = { code, signal, at: Date.now() };
        resolve(worker.exit);
      });
    });
    workers.push(worker);
  }
  return workers;
}

/** Throws when a worker has exited (e.g. refused its store), with the end of its log. */
export function assertRunning(workers) {
  for (const worker of workers) {
    if (worker.exit !== undefined) {
      const tail = readFileSync(worker.logFile, 'utf8').trim().split('\n').slice(-5).join('\n');
      throw new Error(
        `worker pid ${worker.pid} exited (code ${worker.exit.code}, signal ${worker.exit.signal}):\n${tail}`,
      );
    }
  }
}

/**
 * SIGTERM to every worker (graceful stop: no new claims, running processes finish), then waits
 * for each to exit; one still running after `timeoutMs` is killed. Returns seconds per worker.
 */
export async function stopWorkers(workers, timeoutMs = 60_000) {
  const sent = Date.now();
  for (const worker of workers) if (worker.exit === undefined) worker.child.kill('SIGTERM');
  const results = [];
  for (const worker of workers) {
    const timer = setTimeout(() => worker.child.kill('SIGKILL'), Math.max(0, sent + timeoutMs - Date.now()));
    const exit = await worker.exited;
    clearTimeout(timer);
    results.push({ pid: worker.pid, seconds: (exit.at - sent) / 1000, code: exit.code, signal: exit.signal });
  }
  return results;
}

/** Kills whatever is still running (after an error). */
export function killWorkers(workers) {
  for (const worker of workers ?? []) if (worker.exit === undefined) worker.child.kill('SIGKILL');
}

/**
 * What the workers logged: lines at warn or above grouped by message (the run logs at `warn`,
 * so these are the problems), and with `--trace` (level info) the sum of the `tick` lines —
 * due (claims attempted) and claimed (won) — per time slice `slices` ({ name, from, to } ms).
 */
export function readLogs(workers, slices = []) {
  const problems = new Map();
  const ticks = Object.fromEntries(slices.map((s) => [s.name, { ticks: 0, due: 0, claimed: 0 }]));
  for (const worker of workers) {
    for (const line of readFileSync(worker.logFile, 'utf8').split('\n')) {
      if (line === '') continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        const key = `(not JSON) ${line.slice(0, 80)}`;
        problems.set(key, (problems.get(key) ?? 0) + 1);
        continue;
      }
      if (entry.level >= 40) {
        const key = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg}${entry.err?.message ? ` (${entry.err.message})` : ''}`;
        problems.set(key, (problems.get(key) ?? 0) + 1);
      }
      if (entry.msg === 'tick' && entry.tick !== undefined) {
        const at = Date.parse(entry.time);
        for (const slice of slices) {
          if (at >= slice.from && at < slice.to) {
            ticks[slice.name].ticks++;
            ticks[slice.name].due += entry.tick.due;
            ticks[slice.name].claimed += entry.tick.claimed;
          }
        }
      }
    }
  }
  return {
    problems: [...problems.entries()].map(([message, count]) => ({ message, count })),
    ticks,
  };
}
