import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { agentRunPayload } from '../../src/engines/agent.js';
import { httpEngineRequest } from '../support/http-run.js';

// Issue #25 item 7: the service side of the agent protocol as an OpenAPI document of its own
// (examples/agent-service/openapi.json), so that others can implement it; kept true to what the
// `agent` engine sends.
const PATH = resolve(import.meta.dirname, '../../examples/agent-service/openapi.json');

describe('the agent service OpenAPI document (issue #25)', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = JSON.parse(readFileSync(PATH, 'utf8'));
    const result = await validate(doc);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(Object.keys(doc.paths)).toEqual(['/', '/{reference}/stop', '/{reference}/answer']);
  });

  it('names every field the agent engine sends in a run, and requires only those it always sends', () => {
    const doc = JSON.parse(readFileSync(PATH, 'utf8'));
    const run = doc.components.schemas.Run;
    const request = httpEngineRequest('https://agents.example.com/runs', {
      recipe: { name: 'research', engine: 'agent', heartbeatTimeoutMs: 60_000 },
      context: { fencingToken: 7, attempt: 1 },
    });
    const payload = agentRunPayload({
      ...request,
      callback: { url: 'https://u/v1/agent-runs/r', credential: 'c' },
    });
    expect(Object.keys(run.properties).sort()).toEqual(Object.keys(payload ?? {}).sort());
    expect(Object.keys(run.properties.trigger.properties).sort()).toEqual(
      Object.keys(payload?.trigger ?? {}).sort(),
    );
    expect(Object.keys(run.properties.callback.properties).sort()).toEqual(
      Object.keys(payload?.callback ?? {}).sort(),
    );
    expect(payload?.callback.heartbeatTimeoutMs).toBe(60_000);
  });
});
