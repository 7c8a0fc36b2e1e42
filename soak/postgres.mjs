import { randomBytes } from 'node:crypto';
// Ursa's own driver (a dependency of Ursa): the admin connection creates, empties and drops the
// soak's database; everything Ursa does goes through dist/.
import pg from 'pg';

export const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A URL without its password, for the report. */
export function redact(url) {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A fresh database `ursa_soak_<hex>` on the server of `serverUrl` (any database of it: the
 * connection only creates and drops). Returns `{ name, url, drop(), terminate() }`: `terminate`
 * ends every connection to it (a fault: the workers must reconnect).
 */
export async function freshDatabase(serverUrl) {
  const name = `ursa_soak_${randomBytes(5).toString('hex')}`;
  try {
    await withClient(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  } catch (error) {
    throw new Error(`cannot create a database on ${redact(serverUrl)}: ${error.message}`);
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => withClient(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
    terminate: () =>
      withClient(serverUrl, async (c) => {
        const result = await c.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        return result.rowCount ?? 0;
      }),
  };
}
