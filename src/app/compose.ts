import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { EngineRegistry } from '../engines/index.js';
import type { Runtime, RuntimeSettings } from '../runtime/context.js';
import type { Metrics } from '../runtime/metrics.js';
import type { Tracer } from '../runtime/tracer.js';
import { Worker } from '../runtime/worker.js';
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
}

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
  const store = await openStore(storeLocation(options.db, options.cwd));
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
