import type { FastifyInstance } from 'fastify';
import { runCli } from '../../src/cli/program.js';
import type { Fetch } from '../../src/client/http.js';
import { fixedClock } from '../../src/time/clock.js';

/** What an in-process `ursa` run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `ursa <args>` in-process with captured output, a fixed clock, and `cwd` as working
 * directory; `fetch` answers `--url` mode (see {@link injectFetch}).
 */
export async function ursa(
  args: string[],
  options: { cwd?: string; now?: string; stdin?: string[]; env?: Record<string, string>; fetch?: Fetch } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const lines = options.stdin ?? [];
  const code = await runCli(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: async function* () {
      yield* lines;
    },
    clock: fixedClock(Date.parse(options.now ?? '2026-03-28T12:00:00Z')),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return { code, stdout, stderr };
}

/** A `fetch` that answers through `app.inject()`: the real REST app, without a socket. */
export function injectFetch(app: FastifyInstance): Fetch {
  return async (input, init) => {
    const url = new URL(input);
    const response = await app.inject({
      method: init.method as 'GET',
      url: `${url.pathname}${url.search}`,
      headers: init.headers as Record<string, string>,
      ...(typeof init.body === 'string' ? { payload: init.body } : {}),
    });
    const headers = new Headers();
    for (const [key, value] of Object.entries(response.headers))
      if (value !== undefined) headers.set(key, String(value));
    return new Response(response.statusCode === 204 ? null : response.body, {
      status: response.statusCode,
      headers,
    });
  };
}
