import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { applyDirectory } from '../../src/service/apply.js';
import { libraryActor } from '../../src/store/audit.js';
import type { Store } from '../../src/store/index.js';
import { systemClock } from '../../src/time/clock.js';
import type { TestDatabase } from '../support/dialects.js';
import { proxiedPostgres, runtimeOn, type TcpProxy } from '../support/faults.js';
import { httpRecipe } from '../support/http-run.js';
import { cronScheduler, projectFolder } from '../support/project.js';
import { until } from '../support/until.js';

// Issue #20 (decisions §5 fencing): a worker whose event loop runs but whose store is unreachable
// fences itself at its deadline: its in-flight `http` requests are aborted (the receiver sees the
// connection close) before its lease expires, and it claims nothing until a renewal succeeds.
// The main thread does this: the watchdog thread has nothing to end (no process group), and the
// worker process lives on.

const LEASE = { heartbeatMs: 200, leaseTtlMs: 1500, takeoverMarginMs: 300, fenceGraceMs: 300 };

let database: TestDatabase | undefined;
let proxy: TcpProxy | undefined;
let worker: Worker | undefined;
let server: Server | undefined;
const stores: Store[] = [];
afterEach(async () => {
  proxy?.restore();
  await worker?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  for (const store of stores.splice(0)) await store.close();
  await proxy?.close();
  await database?.drop();
  worker = proxy = database = server = undefined;
});

/** A receiver that never answers: it notes when each request arrived and when its connection closed. */
async function silentReceiver() {
  const requests: { arrived: number; closed?: number }[] = [];
  server = createServer((req) => {
    const request: { arrived: number; closed?: number } = { arrived: Date.now() };
    requests.push(request);
    req.socket.on('close', () => {
      request.closed = Date.now();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests };
}

/** `until`, for up to `ms`. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await until(condition, what);
    } catch (error) {
      if (Date.now() >= end) throw error;
    }
  }
}

describe('a worker cut off from its store, its event loop running (PostgreSQL; issue #20)', () => {
  it('aborts its in-flight http request before its lease expires, and claims again once it renewed', {
    timeout: 60_000,
  }, async () => {
    const opened = await proxiedPostgres();
    ({ database, proxy } = opened);
    stores.push(opened.direct, opened.proxied);
    const receiver = await silentReceiver();
    await applyDirectory(
      runtimeOn(opened.direct, systemClock),
      projectFolder({
        '_vance/recipes/hook.yaml': httpRecipe(receiver.url, {}, 'PT60S'),
        '_vance/scheduler/hook.yaml': cronScheduler('* * * * * *', 'hook', 'overlap: skip\n'),
      }),
      'acme',
      'ops',
      libraryActor('alice'),
    );
    worker = new Worker(runtimeOn(opened.proxied, systemClock), { ...LEASE, maxSleepMs: 200 });
    await worker.start();
    await eventually(() => receiver.requests.length > 0, 'the request arriving');

    const cutAt = Date.now();
    opened.proxy.cut();
    await eventually(() => receiver.requests[0]?.closed !== undefined, 'the request aborted');
    const [request] = receiver.requests;
    // Within the lease of the last renewal, which came before the cut; long before the 60 s timeout.
    expect((request?.closed as number) - cutAt).toBeLessThan(LEASE.leaseTtlMs);
    // Fenced: nothing more is sent while the store stays away.
    const fenced = worker;
    expect(fenced.executor.lease.fenced).toBe(true);
    expect(receiver.requests).toHaveLength(1);

    // The store back: the worker renews its lease, records the run it stopped, and claims again.
    opened.proxy.restore();
    await eventually(() => !fenced.executor.lease.fenced, 'the lease renewed');
    const first = () =>
      opened.direct.db.selectFrom('runs').selectAll().orderBy('scheduled_for').executeTakeFirst();
    await eventually(async () => (await first())?.state === 'ended', 'the stopped run recorded');
    const run = await first();
    expect([run?.outcome, run?.reason]).toEqual(['cancelled', 'lease-lost']);
    await eventually(() => receiver.requests.length > 1, 'the next run sent');
  });
});
