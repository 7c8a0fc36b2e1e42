import { afterEach, describe, expect, it } from 'vitest';
import { compose } from '../../src/app/compose.js';
import { defaultEngines } from '../../src/engines/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { freshDatabase, type TestDatabase } from '../support/dialects.js';
import { capturedLog, TcpProxy, throughProxy } from '../support/faults.js';
import { TEST_SETTINGS } from '../support/runtime.js';
import { until } from '../support/until.js';

// A worker started while its PostgreSQL restarts, or whose first connection a network fault cut,
// waits it out (the soak's chaos killed one in its migrations): `ursa serve` and `ursa worker`
// open their store again by a backoff while it cannot be reached, and give up on what it refuses.

const made: { db?: TestDatabase; proxy?: TcpProxy; close?: () => Promise<void> }[] = [];
afterEach(async () => {
  for (const { db, proxy, close } of made.splice(0)) {
    await close?.();
    await proxy?.close();
    await db?.drop();
  }
});

const FAST = { attempts: 6, baseMs: 20, maxMs: 40 };

async function proxied() {
  const db = await freshDatabase('postgres');
  const url = new URL(db.location);
  const proxy = await TcpProxy.start(url.hostname, Number(url.port));
  const entry: (typeof made)[number] = { db, proxy };
  made.push(entry);
  return { entry, proxy, location: throughProxy(db.location, proxy) };
}

function composeAt(db: string, log: ReturnType<typeof capturedLog>['log'], openRetry = FAST) {
  return compose({
    db,
    clock: fixedClock(0),
    settings: TEST_SETTINGS,
    engines: defaultEngines(),
    log,
    openRetry,
  });
}

describe('opening the store of a long-running process', () => {
  it('tries again while the store cannot be reached, and opens it once it can', async () => {
    const { entry, proxy, location } = await proxied();
    const { log, lines } = capturedLog('warn');
    proxy.cut();
    const opening = composeAt(location, log);
    await until(async () => proxy.refused >= 2, 'two tries refused');
    proxy.restore();
    const composed = await opening;
    entry.close = composed.close;
    expect(await composed.repos.schedules.earliestNextRunAt()).toBeNull();
    expect(
      lines.filter((l) => l.msg === 'cannot reach the store yet; retrying').length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('gives up after its tries: the store is unavailable, an infrastructure fault', async () => {
    const { proxy, location } = await proxied();
    const { log } = capturedLog('warn');
    proxy.cut();
    await expect(composeAt(location, log, { attempts: 3, baseMs: 10, maxMs: 10 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      kind: 'infrastructure',
    });
    expect(proxy.refused).toBeGreaterThanOrEqual(3);
  });

  it('does not retry what the server refuses: a database that does not exist fails at once', async () => {
    const { proxy, location } = await proxied();
    const { log, lines } = capturedLog('warn');
    const missing = new URL(location);
    missing.pathname = '/ursa_no_such_database';
    await expect(composeAt(missing.toString(), log)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(lines).toEqual([]);
    expect(proxy.refused).toBe(0);
  });
});
