import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ursa } from '../support/cli.js';

// decisions §7: `ursa serve` is the worker plus the REST API (test/e2e/serve.test.ts runs it for real).
describe('ursa serve', () => {
  it('refuses a port in use as a configuration error, before it creates a token or starts a worker', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ursa-serve-'));
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    const port = (busy.address() as { port: number }).port;
    try {
      const run = await ursa(['serve', '--port', String(port)], { cwd, env: { URSA_LOG_LEVEL: 'silent' } });
      expect(run).toEqual({
        code: 2,
        stdout: '',
        stderr:
          `ursa: port: 127.0.0.1:${port} is already in use [CONFIG_INVALID]\n` +
          '  allowed: a free port (--port, URSA_PORT or port: in ursa.yaml) on an address of this machine (--host)\n',
      });
    } finally {
      await new Promise((done) => busy.close(done));
    }
    // No token was made, and the store is free again (its lock released).
    expect((await ursa(['token', 'list'], { cwd })).stdout).toBe(
      'no tokens (ursa serve creates an admin token on its first start)\n',
    );
    const port0 = await ursa(['serve', '--port', '0'], { cwd });
    expect([port0.code, port0.stderr.split('\n')[0]]).toEqual([
      2,
      'ursa: --port: "0" is out of range; allowed: an integer 1-65535 [CONFIG_INVALID]',
    ]);
  });
});
