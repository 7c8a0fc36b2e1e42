import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultEngines } from '../../src/engines/index.js';
import { createLogger } from '../../src/log.js';
import type { Runtime, RuntimeSettings } from '../../src/runtime/context.js';
import { Worker } from '../../src/runtime/worker.js';
import { openStore, repositories, type Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';

/** A runtime over a real SQLite file in a fresh temporary folder, with a clock the test steps. */
export interface TestRuntime {
  readonly rt: Runtime;
  readonly clock: ReturnType<typeof fixedClock>;
  readonly store: Store;
  readonly dir: string;
  readonly dbPath: string;
  worker(): Worker;
  close(): Promise<void>;
}

export const TEST_SETTINGS: RuntimeSettings = {
  misfireThresholdMs: 60_000,
  runLogRetentionDays: 7,
  shutdownGraceMs: 5_000,
};

export async function testRuntime(
  start: string,
  settings: Partial<RuntimeSettings> = {},
  dbPath?: string,
): Promise<TestRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-test-'));
  const path = dbPath ?? join(dir, 'ursa.db');
  const store = await openStore(path);
  const clock = fixedClock(Date.parse(start));
  const rt: Runtime = {
    repos: repositories(store),
    clock,
    settings: { ...TEST_SETTINGS, ...settings },
    engines: defaultEngines(),
    log: createLogger('silent'),
  };
  return {
    rt,
    clock,
    store,
    dir,
    dbPath: path,
    worker: () => new Worker(rt),
    close: async () => {
      await store.close();
      if (dbPath === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
