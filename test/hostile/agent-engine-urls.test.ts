import { describe, expect, it } from 'vitest';
import { createAgentEngine } from '../../src/engines/agent.js';
import type { HandOffAnswer, HandOffStop } from '../../src/engines/engine.js';
import { reply, startHookServer } from '../support/hook-server.js';
import { httpEngineRequest } from '../support/http-run.js';

// Hostile review of the agent engine's stop and answer (issue #25): the URL a service's run
// reference builds, and the outbound policy on them. A real server on 127.0.0.1.

const ENV = { URSA_SECRET_AGENTS_TOKEN: 'agents-secret-77' };

function stopOf(url: string, reference: string): HandOffStop {
  const request = httpEngineRequest(url, {
    recipe: {
      name: 'research',
      engine: 'agent',
      heartbeatTimeoutMs: 60_000,
      secretHeaders: { Authorization: 'URSA_SECRET_AGENTS_TOKEN' },
    },
    context: { fencingToken: 7, attempt: 1 },
  });
  return {
    processId: request.processId,
    recipe: request.recipe,
    context: request.context,
    reference,
    reason: 'stopped by ada',
  };
}

const answerOf = (url: string, reference: string): HandOffAnswer => ({
  ...stopOf(url, reference),
  questionId: 1,
  answer: 'main',
  answeredBy: 'ada',
});

describe('hostile: agent engine stop and answer URLs (issue #25)', () => {
  it('applies the outbound policy to stops and answers, not only to the start (sound)', async () => {
    const server = await startHookServer(reply(200, '{}'));
    const engine = createAgentEngine({ outbound: { deny: ['127.0.0.0/8'] }, env: ENV });
    const stop = await engine.stop?.(stopOf(`${server.origin}/runs`, 'svc-1'));
    const answer = await engine.answer?.(answerOf(`${server.origin}/runs`, 'svc-1'));
    expect(stop).toMatchObject({ taken: false, reason: expect.stringMatching(/^outbound policy refuses/) });
    expect(answer).toMatchObject({ taken: false, reason: expect.stringMatching(/^outbound policy refuses/) });
    expect(server.received).toHaveLength(0);
  });

  it('keeps a reference with slashes, percent escapes, ? and # in one path segment (sound)', async () => {
    const server = await startHookServer(reply(200, '{}'));
    const engine = createAgentEngine({ env: ENV });
    for (const reference of ['../x', '%2F..%2Fadmin', 'a/b', 'a?b=1#c', '\\..\\x', 'x'.repeat(200)])
      await engine.stop?.(stopOf(`${server.origin}/tenant-a/runs`, reference));
    for (const r of server.received) expect(r.url).toMatch(/^\/tenant-a\/runs\/[^/?#]+\/stop$/);
  });

  // Finding F3: "." and ".." pass encodeURIComponent as they are, and the URL's path setter
  // resolved them as dot segments: the request went out of the recipe's path with its secret
  // headers. A dot-only reference is refused at the start; a stop or answer never leaves the path.
  it('sends no stop or answer of a "." or ".." reference: it would leave the recipe path (F3)', async () => {
    const server = await startHookServer(reply(200, '{}'));
    const engine = createAgentEngine({ env: ENV });
    const refused = {
      taken: false,
      reason: 'the recipe has no usable url, or the reference would lead out of it',
    };
    expect(await engine.stop?.(stopOf(`${server.origin}/tenant-a/runs`, '..'))).toEqual(refused);
    expect(await engine.answer?.(answerOf(`${server.origin}/tenant-a/runs`, '.'))).toEqual(refused);
    expect(server.received).toEqual([]);
  });
});
