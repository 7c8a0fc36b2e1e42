import { describe, expect, it } from 'vitest';
import type { EngineRequest } from '../../src/engines/engine.js';
import { createHttpEngine, FENCING_TOKEN_HEADER } from '../../src/engines/http.js';
import { createShellEngine } from '../../src/engines/shell.js';
import { headerNameProblem } from '../../src/recipes/http-fields.js';
import { reply, startHookServer } from '../support/hook-server.js';
import { httpEngineRequest } from '../support/http-run.js';
import { node, request } from './helpers.js';

// Issue #20 (decisions §5): every engine receives the fencing token of its run's attempt and the
// attempt's number, so that a service the run changes can refuse a stale attempt. A workflow run
// started by hand belongs to no scheduler run: its steps get neither.

const ATTEMPT = { fencingToken: 9_007_199_254_740_000, attempt: 3 } as const;

/** `request` with the context of an attempt (or none). */
function withAttempt(base: EngineRequest, attempt: typeof ATTEMPT | undefined): EngineRequest {
  return { ...base, context: { ...base.context, ...attempt } };
}

async function childEnv(attempt: typeof ATTEMPT | undefined): Promise<Record<string, string>> {
  const result = await createShellEngine().run(
    withAttempt(request(node('process.stdout.write(JSON.stringify(process.env))')), attempt),
  );
  expect(result.status).toBe('done');
  return JSON.parse(result.output ?? '');
}

describe('the fencing token reaches every engine (issue #20, decisions §5)', () => {
  it('shell: the child has URSA_FENCING_TOKEN and URSA_ATTEMPT, as decimal integers', async () => {
    const env = await childEnv(ATTEMPT);
    expect(env).toMatchObject({
      URSA_CORRELATION_ID: 'corr-0001',
      URSA_FENCING_TOKEN: '9007199254740000',
      URSA_ATTEMPT: '3',
    });
    const none = await childEnv(undefined);
    expect(Object.keys(none).filter((k) => k === 'URSA_FENCING_TOKEN' || k === 'URSA_ATTEMPT')).toEqual([]);
  });

  it('http: the Ursa-Fencing-Token header next to Idempotency-Key, and the token and attempt in trigger', async () => {
    const server = await startHookServer(reply(200, 'ok'));
    const engine = createHttpEngine();
    const url = `${server.origin}/hook`;
    expect(await engine.run(withAttempt(httpEngineRequest(url), ATTEMPT))).toMatchObject({ status: 'done' });
    expect(await engine.run(httpEngineRequest(url))).toMatchObject({ status: 'done' });

    const [fenced, plain] = server.received;
    expect(FENCING_TOKEN_HEADER).toBe('Ursa-Fencing-Token');
    expect(fenced?.headers['ursa-fencing-token']).toBe('9007199254740000');
    expect(fenced?.headers['idempotency-key']).toBe(plain?.headers['idempotency-key']);
    expect(JSON.parse(fenced?.body ?? '').trigger).toMatchObject({
      correlationId: 'run_hook',
      fencingToken: 9_007_199_254_740_000,
      attempt: 3,
    });
    expect(plain?.headers['ursa-fencing-token']).toBeUndefined();
    expect(Object.keys(JSON.parse(plain?.body ?? '').trigger)).not.toContain('fencingToken');
  });

  it('http: a recipe cannot set the Ursa-Fencing-Token header itself', () => {
    for (const name of ['Ursa-Fencing-Token', 'ursa-fencing-token'])
      expect(headerNameProblem(name)).toBe(
        'is set by the http engine or the connection and cannot be given in a recipe',
      );
  });
});
