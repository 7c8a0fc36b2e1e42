import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, ENV, eventually, freePort } from '../support/server.js';
import { tempDir } from '../support/temp.js';

export { eventually };

/**
 * A real `ursa serve` for the browser tests (issue #9), started the way test/e2e/serve.test.ts
 * starts one: the built bin, a temporary SQLite store, a free port, and the admin token that the
 * first start prints on standard error.
 */

export const PAGE = resolve(import.meta.dirname, '../../dist/web/scheduler.html');

export interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  /** The admin token for all tenants from the first start's standard error. */
  readonly token: string;
  /** The server's folder (its store), removed after the test file. */
  readonly dir: string;
  output(): { stdout: string; stderr: string };
  /** SIGTERM, then the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/** A REST call to `served` with its admin token; a `body` is sent as YAML. */
export function call(served: Served, method: string, path: string, body?: string): Promise<Response> {
  return fetch(`${served.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${served.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/yaml' }),
    },
    ...(body === undefined ? {} : { body }),
  });
}

/**
 * Starts the server. `publicUrl`: its own address is its public URL, so agent recipes are taken and
 * their services call back here (the agent runs of an inbox's questions, issue #25).
 */
export async function serve(options: { readonly publicUrl?: boolean } = {}): Promise<Served> {
  if (!existsSync(BIN) || !existsSync(PAGE)) {
    throw new Error(`the built package is missing (${BIN}, ${PAGE}): run npm run build first`);
  }
  const dir = tempDir('ursa-web-');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--db', join(dir, 'ursa.db'), '--port', String(port)],
    {
      cwd: dir,
      env: {
        ...ENV,
        URSA_LOG_LEVEL: 'warn',
        ...(options.publicUrl === true ? { URSA_PUBLIC_URL: url } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<void>((done) => child.once('exit', () => done()));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`ursa serve exited ${child.exitCode}: ${stderr}`);
      try {
        return (await fetch(`${url}/healthz`)).ok ? true : undefined;
      } catch {
        return undefined;
      }
    },
    'GET /healthz',
    15_000,
  );
  const line = /^ursa: created an admin token for all tenants .*: (ursa_[A-Za-z0-9_-]{43})$/m.exec(stderr);
  if (line === null) throw new Error(`no admin token on the first start's standard error:\n${stderr}`);
  return {
    child,
    url,
    token: line[1] as string,
    dir,
    output: () => ({ stdout, stderr }),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
