import { createServer, type Server, Socket } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { accountOccurrences } from '../../src/decisions/accounting.js';
import { defaultEngines } from '../../src/engines/index.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { Runtime } from '../../src/runtime/context.js';
import { openStore, repositories, type Store } from '../../src/store/index.js';
import type { Clock } from '../../src/time/clock.js';
import { freshDatabase, type TestDatabase } from './dialects.js';
import { TEST_SETTINGS } from './runtime.js';

/** A log line as pino wrote it (JSON), with its message and level. */
export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly err?: { readonly code?: string; readonly message?: string };
  readonly [key: string]: unknown;
}

/** A logger at `level` whose lines are kept in `lines`, for tests that assert what was logged. */
export function capturedLog(level = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text));
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}

/** A runtime over `store` (opened by the test, with the options its fault needs) and `clock`. */
export function runtimeOn(store: Store, clock: Clock, log: Logger = createLogger('silent')): Runtime {
  return { repos: repositories(store), clock, settings: TEST_SETTINGS, engines: defaultEngines(), log };
}

/** A run row as the coverage check reads it. */
export interface RunRow {
  readonly name: string;
  readonly scheduled_for: number | string;
  readonly coalesced: number | string;
  readonly coalesced_until: number | string | null;
}

/**
 * Checks decisions §4 over `[from, to]` (UTC ms, every `stepMs`): each occurrence of each
 * scheduler is a run, or absorbed by a coalesced run (after its served occurrence, up to its
 * `coalesced_until`), and none is served twice (two runs, or a run inside a coalesced run's range);
 * two runs of one occurrence outside the window count too. Returns what is missing and what is
 * doubled. The accounting is Ursa's `accountOccurrences`, which the soak script uses as well.
 */
export function coverage(
  runs: readonly RunRow[],
  names: readonly string[],
  from: number,
  to: number,
  stepMs: number,
): { missing: string[]; doubled: string[] } {
  const missing: string[] = [];
  const doubled: string[] = [];
  const expected = Array.from({ length: Math.floor((to - from) / stepMs) + 1 }, (_, k) => from + k * stepMs);
  for (const name of names) {
    const mine = runs.filter((r) => r.name === name);
    const account = accountOccurrences(
      expected,
      mine.map((r) => ({
        scheduledFor: Number(r.scheduled_for),
        coalescedUntil: Number(r.coalesced) === 1 ? Number(r.coalesced_until) : null,
      })),
    );
    const twice = new Map(account.doubled.map(({ at, count }) => [at, count]));
    const counts = new Map<number, number>();
    for (const r of mine) counts.set(Number(r.scheduled_for), (counts.get(Number(r.scheduled_for)) ?? 0) + 1);
    for (const [at, n] of counts) if (n > 1 && !twice.has(at)) twice.set(at, n);
    for (const [at, n] of [...twice].sort(([a], [b]) => a - b))
      doubled.push(`${name}@${new Date(at).toISOString()}×${n}`);
    for (const at of account.missing) missing.push(`${name}@${new Date(at).toISOString()}`);
  }
  return { missing, doubled };
}

/**
 * Asserts that the feed of `store` has one END line for each of `runs` and at most one START (a
 * run is started and ended once, never twice, whatever failed on the way: spec §9a).
 */
export async function expectStartedAndEndedOnce(
  store: Store,
  runs: readonly { readonly correlation_id: string }[],
): Promise<void> {
  const feed = await store.db.selectFrom('feed').select(['trace_id', 'kind']).execute();
  for (const run of runs) {
    const kinds = feed.filter((l) => l.trace_id === run.correlation_id).map((l) => l.kind);
    expect(
      kinds.filter((k) => k === 'END'),
      run.correlation_id,
    ).toHaveLength(1);
    expect(kinds.filter((k) => k === 'START').length, run.correlation_id).toBeLessThanOrEqual(1);
  }
}

/**
 * A TCP proxy in front of a server (PostgreSQL), for outages without touching the server (other
 * tests use it): {@link cut} drops every open connection and resets each new one at once, as a
 * server that went away does; {@link restore} lets connections through again.
 */
export class TcpProxy {
  readonly #sockets = new Set<Socket>();
  #down = false;
  #refused = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Starts a proxy on 127.0.0.1 (a free port) to `host:port`. */
  static async start(host: string, port: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, host, port));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  /** Connections reset because the proxy was cut: each is a client's attempt to reconnect. */
  get refused(): number {
    return this.#refused;
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.#down) {
      this.#refused++;
      client.destroy();
      return;
    }
    const upstream = new Socket();
    this.#sockets.add(client);
    this.#sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(port, host, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  /** Drops every connection and resets new ones: the server is gone, as far as clients can tell. */
  cut(): void {
    this.#down = true;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  /** Lets connections through again. */
  restore(): void {
    this.#down = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** `url` (postgres://…) with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const via = new URL(url);
  via.hostname = '127.0.0.1';
  via.port = String(proxy.port);
  return via.toString();
}

/** What {@link proxiedPostgres} opened; the caller closes the stores and the proxy and drops the database. */
export interface ProxiedPostgres {
  readonly database: TestDatabase;
  readonly proxy: TcpProxy;
  /** A store on the server itself, which an outage does not reach. */
  readonly direct: Store;
  /** A store through the proxy, which {@link TcpProxy.cut} cuts off. */
  readonly proxied: Store;
}

/** A fresh PostgreSQL database, a proxy in front of its server, and a store on either side. */
export async function proxiedPostgres(): Promise<ProxiedPostgres> {
  const database = await freshDatabase('postgres');
  const server = new URL(database.location);
  const proxy = await TcpProxy.start(server.hostname, Number(server.port || 5432));
  const direct = await openStore(database.location);
  const proxied = await openStore(throughProxy(database.location, proxy));
  return { database, proxy, direct, proxied };
}
