import { defaultEngines, type HttpEngineOptions } from '../../src/engines/index.js';
import { createLogger } from '../../src/log.js';
import type { Runtime, RuntimeSettings } from '../../src/runtime/context.js';
import { Worker, type WorkerOptions } from '../../src/runtime/worker.js';
import {
  openStore,
  repositories,
  type Store,
  type StoreDialect,
  type StoreOptions,
} from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { freshDatabase } from './dialects.js';

/** A runtime over a real, fresh database (SQLite file or PostgreSQL), with a clock the test steps. */
export interface TestRuntime {
  readonly rt: Runtime;
  readonly clock: ReturnType<typeof fixedClock>;
  readonly store: Store;
  /** Where the database is: pass to `openStore` for a second connection (another worker). */
  readonly location: string;
  /** Another runtime on the same database and clock, as a second worker process would have. */
  peer(): Promise<Runtime>;
  worker(options?: WorkerOptions, rt?: Runtime): Worker;
  close(): Promise<void>;
}

export const TEST_SETTINGS: RuntimeSettings = {
  misfireThresholdMs: 60_000,
  runLogRetentionDays: 7,
  shutdownGraceMs: 5_000,
};

export async function testRuntime(
  start: string,
  options: {
    dialect?: StoreDialect;
    settings?: Partial<RuntimeSettings>;
    store?: StoreOptions;
    /** Options of the `http` engine; its `secretHosts` also go to the settings, as `ursa serve` does. */
    http?: HttpEngineOptions;
  } = {},
): Promise<TestRuntime> {
  const database = await freshDatabase(options.dialect ?? 'sqlite');
  const stores: Store[] = [];
  const clock = fixedClock(Date.parse(start));
  const runtimeOn = async (): Promise<Runtime> => {
    const store = await openStore(database.location, options.store);
    stores.push(store);
    return {
      repos: repositories(store),
      clock,
      settings: {
        ...TEST_SETTINGS,
        ...(options.http?.secretHosts === undefined ? {} : { secretHosts: options.http.secretHosts }),
        ...options.settings,
      },
      engines: defaultEngines(options.http === undefined ? {} : { http: options.http }),
      log: createLogger('silent'),
    };
  };
  const rt = await runtimeOn();
  return {
    rt,
    clock,
    store: rt.repos.store,
    location: database.location,
    peer: runtimeOn,
    worker: (workerOptions, on = rt) => new Worker(on, workerOptions),
    close: async () => {
      for (const store of stores) await store.close();
      await database.drop();
    },
  };
}
