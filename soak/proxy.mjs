import { connect, createServer } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between one soak worker and the PostgreSQL server, so that the soak can
 * cut that worker's connections alone (the fault "a cut connection for one worker"): `cut(ms)`
 * resets every connection through it and resets each new one for `ms` milliseconds, then lets
 * them through again. Resolves once listening: `{ port, url(databaseUrl), cut(ms), restore(),
 * restored(), close() }`; `url` is `databaseUrl` with its host and port replaced by the proxy's.
 *
 * @param target `{ host, port }` of the PostgreSQL server.
 */
export function startProxy(target) {
  const pairs = new Set();
  let cutUntil = 0;
  let timer;
  const reset = (socket) => {
    if (!socket.destroyed) socket.resetAndDestroy();
  };
  const server = createServer((client) => {
    client.on('error', () => {});
    if (Date.now() < cutUntil) {
      reset(client);
      return;
    }
    const upstream = connect(target);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    client.on('error', end);
    upstream.on('close', end);
    client.on('close', end);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  let waiting = [];
  const restore = () => {
    clearTimeout(timer);
    cutUntil = 0;
    for (const resolve of waiting) resolve();
    waiting = [];
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        port,
        url(databaseUrl) {
          const url = new URL(databaseUrl);
          url.hostname = '127.0.0.1';
          url.port = String(port);
          return url.toString();
        },
        cut(ms) {
          clearTimeout(timer);
          cutUntil = Date.now() + ms;
          timer = setTimeout(restore, ms);
          for (const { client, upstream } of pairs) {
            reset(client);
            reset(upstream);
          }
          pairs.clear();
        },
        restore,
        /** Resolves when the connections are let through (at once when not cut). */
        restored() {
          return Date.now() < cutUntil ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve();
        },
        close() {
          restore();
          for (const { client, upstream } of pairs) {
            client.destroy();
            upstream.destroy();
          }
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
