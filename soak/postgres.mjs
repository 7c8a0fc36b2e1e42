import { randomBytes } from 'node:crypto';
// The benches' admin connection (Ursa's own driver): it creates, empties and drops the soak's
// database; everything Ursa does goes through dist/.
import { withClient as benchClient, MACHINE_URL, redact } from '../bench/workers/postgres.mjs';

export { redact };

export const DEFAULT_SERVER = MACHINE_URL;

/** The admin connection of the soak: the benches', with 5 s to connect (3 s there). */
const withClient = (url, fn) => benchClient(url, fn, { connectTimeoutMs: 5000 });

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
