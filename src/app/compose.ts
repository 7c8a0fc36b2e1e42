import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { EngineRegistry } from '../engines/index.js';
import { UrsaError } from '../errors/index.js';
import type { Runtime, RuntimeSettings } from '../runtime/context.js';
import type { Metrics } from '../runtime/metrics.js';
import type { Backoff } from '../runtime/record-retry.js';
import type { Tracer } from '../runtime/tracer.js';
import { Worker } from '../runtime/worker.js';
import { isStoreUnreachable } from '../store/errors.js';
import { isPostgresUrl, openStore, type Repositories, repositories, type Store } from '../store/index.js';
import type { Clock } from '../time/clock.js';

/**
 * The composition root: the one place that assembles a store, its repositories and the runtime
 * over them, for every way Ursa starts — `createUrsa` (src/ursa.ts), `ursa serve` / `ursa worker`
 * and every other CLI command (src/cli/context.ts). Like fastify's `buildApp` without `listen`:
 * {@link compose} builds and returns, it starts nothing; {@link claimWorker} starts a worker's
 * claim on the store when the caller wants a scheduling loop in this process.
 */

/** What {@link compose} is given: where the store is, and the runtime's parts chosen by the caller. */
export interface ComposeOptions {
  /** A SQLite file path (relative paths are taken from `cwd`) or a `postgres://` URL. */
  readonly db: string;
  /** The folder a relative SQLite path is resolved against (default: the process's). */
  readonly cwd?: string;
  readonly clock: Clock;
  readonly settings: RuntimeSettings;
  readonly engines: EngineRegistry;
  readonly log: Logger;
  /** Prometheus metrics, when something scrapes them (`ursa serve`). */
  readonly metrics?: Metrics;
  /** Where spans go, when tracing is on (`startTracing`, issue #26 item 3). */
  readonly tracer?: Tracer;
  /**
   * How opening the store is retried while it cannot be reached (a server restarting, a
   * connection cut): for the long-running processes, `ursa serve` and `ursa worker`. Without it,
   * the first failure is thrown, as a short command wants.
   */
  readonly openRetry?: Backoff;
}

/**
 * How `ursa serve` and `ursa worker` retry opening their store (see
 * {@link ComposeOptions.openRetry}): 12 tries over about 40 s, from 250 ms doubling up to 5 s.
 */
export const OPEN_RETRY: Backoff = { attempts: 12, baseMs: 250, maxMs: 5000 };

/** An open store with the runtime over it. `close()` closes the store (stop a worker first). */
export interface Composition {
  readonly store: Store;
  readonly repos: Repositories;
  readonly rt: Runtime;
  close(): Promise<void>;
}

/**
 * Where the store of `db` is: a `postgres://` URL as it is, a SQLite path made absolute against
 * `cwd`, so a process that changes folder later still opens the same file.
 */
export function storeLocation(db: string, cwd: string = process.cwd()): string {
  return isPostgresUrl(db) ? db : resolve(cwd, db);
}

/**
 * Whether the store of `db` is there to open without creating it: a SQLite file that exists
 * (relative to `cwd`), or any PostgreSQL URL (whether the server answers is for opening to say).
 */
export function storeExists(db: string, cwd: string = process.cwd()): boolean {
  return isPostgresUrl(db) || existsSync(storeLocation(db, cwd));
}

/**
 * Opens (and migrates) the store of `options.db` and builds the runtime over it.
 *
 * @throws UrsaError `STORE_UNAVAILABLE` (an `InfrastructureError`) when the store cannot be
 *   opened, reached or migrated.
 */
export async function compose(options: ComposeOptions): Promise<Composition> {
  const store = await openWithRetry(storeLocation(options.db, options.cwd), options);
  const repos = repositories(store);
  const rt: Runtime = {
    repos,
    clock: options.clock,
    settings: options.settings,
    engines: options.engines,
    log: options.log,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
  };
  return { store, repos, rt, close: () => store.close() };
}

// Opens the store, again by `options.openRetry` while it cannot be reached (not when it refuses:
// a missing database, a schema newer than this Ursa). Logs the 1st, 2nd, 4th … failure.
async function openWithRetry(location: string, options: ComposeOptions): Promise<Store> {
  const backoff = options.openRetry ?? { attempts: 1, baseMs: 0, maxMs: 0 };
  for (let attempt = 0; ; attempt++) {
    try {
      return await openStore(location);
    } catch (error) {
      const unreachable =
        error instanceof UrsaError && error.code === 'STORE_UNAVAILABLE' && isStoreUnreachable(error.cause);
      if (!unreachable || attempt + 1 >= backoff.attempts) throw error;
      if ((attempt & (attempt + 1)) === 0)
        options.log.warn({ err: error, attempt: attempt + 1 }, 'cannot reach the store yet; retrying');
      await delay(Math.min(backoff.baseMs * 2 ** attempt, backoff.maxMs));
    }
  }
}

/**
 * A worker over `rt` that may start its scheduling loop (decisions §5): on SQLite it first takes
 * the store as its one serving process ({@link Worker.takeStore}); PostgreSQL serves several.
 * The caller calls `start()` and, in the end, `stop()`.
 *
 * @throws UrsaError `STORE_LOCKED` when another live process serves the SQLite store.
 */
export async function claimWorker(rt: Runtime): Promise<Worker> {
  const sqlite = rt.repos.store.dialect === 'sqlite';
  const worker = new Worker(rt, { exclusive: sqlite });
  if (sqlite) await worker.takeStore();
  return worker;
}
