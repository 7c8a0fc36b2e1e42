import { describe, expect, it } from 'vitest';
import { createHttpEngine } from '../../src/engines/http.js';
import { shellEnvironment } from '../../src/engines/shell.js';
import { traceparentOf } from '../../src/runs/trace.js';
import { reply, startHookServer } from '../support/hook-server.js';
import { httpEngineRequest } from '../support/http-run.js';
import { request } from './helpers.js';

// Issue #26 item 3: the W3C traceparent of the run's span reaches its process, so an agent's own
// spans join the run's trace: TRACEPARENT for `shell`, the traceparent header for `http`.

const TRACEPARENT = traceparentOf('run_hook');

describe("the run's traceparent reaches its engine (issue #26 item 3)", () => {
  it('shell: TRACEPARENT when the request has one, nothing otherwise', () => {
    const base = request(['true']);
    const traced = shellEnvironment({ ...base, context: { ...base.context, traceparent: TRACEPARENT } }, {});
    expect(traced.TRACEPARENT).toBe(TRACEPARENT);
    // Not inherited from the worker's own environment either: only the run's.
    expect(shellEnvironment(base, { TRACEPARENT: '00-aa-bb-01' }).TRACEPARENT).toBeUndefined();
  });

  it("http: a traceparent header when the request has one, over a recipe's own", async () => {
    const server = await startHookServer(reply(200, 'ok'));
    try {
      const engine = createHttpEngine();
      const url = `${server.origin}/hook`;
      const recipe = { headers: { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' } };
      const traced = httpEngineRequest(url, { recipe, context: { traceparent: TRACEPARENT } });
      expect(await engine.run(traced)).toMatchObject({ status: 'done' });
      expect(await engine.run(httpEngineRequest(url))).toMatchObject({ status: 'done' });
      const [withTrace, without] = server.received;
      expect(withTrace?.headers.traceparent).toBe(TRACEPARENT);
      expect(without?.headers.traceparent).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
