import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** One request as a {@link HookServer} saw it. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A webhook receiver on 127.0.0.1 that records what reaches it, for `http` engine tests. */
export interface HookServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  readonly received: Received[];
  /** TCP connections accepted so far, whether or not a request followed. */
  connections(): number;
  /** Resolves with the next request the server has read completely. */
  nextRequest(): Promise<Received>;
  close(): Promise<void>;
}

export type Handler = (request: Received, response: ServerResponse) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/**
 * Starts a server on 127.0.0.1 (port 0) that records each request, then lets `handler` answer.
 * Closed after the test.
 */
export async function startHookServer(handler: Handler): Promise<HookServer> {
  const received: Received[] = [];
  const waiting: Array<(request: Received) => void> = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      for (const resolve of waiting.splice(0)) resolve(request);
      handler(request, res);
    });
  });
  server.on('connection', () => connections++);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    connections: () => connections,
    nextRequest: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      servers.splice(servers.indexOf(server), 1);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers `status` with a text body. */
export function reply(status: number, body: string): Handler {
  return (_request, response) => {
    response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    response.end(body);
  };
}
