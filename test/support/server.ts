import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

/** The built `ursa` bin: end-to-end tests run what users run. */
export const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');

/**
 * The environment of every child: this one without the settings a developer may have set (Ursa's,
 * and OpenTelemetry's, which would turn traces on).
 */
export const ENV: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith('URSA_') && !key.startsWith('OTEL_')),
);

/** A port nothing listens on right now: the kernel's pick for port 0, released again. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? done(address.port) : fail()));
    });
  });
}

/** Polls `probe` until it returns a value other than undefined; for work another process does. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: nothing within ${ms} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** A running `ursa serve`, its output so far and its exit. */
export interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exit: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

/** Options of {@link serve}: a port to listen on (default a free one), more environment, how long to wait for it. */
export interface ServeOptions {
  readonly port?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** How long to wait for `/healthz`, ms (default 10 s; a restart after SIGKILL waits for the lease). */
  readonly waitMs?: number;
}

export async function serve(cwd: string, db: string, options: ServeOptions = {}): Promise<Server> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--port', String(port)], {
    cwd,
    env: { ...ENV, URSA_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = `http://127.0.0.1:${port}`;
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
    options.waitMs ?? 10_000,
  );
  return { child, url, exit, output: () => ({ stdout, stderr }) };
}

/** `ursa <args>` as a real process (the built bin). */
export function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: ENV, timeout: 10_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        done({ code, stdout, stderr });
      },
    );
  });
}
