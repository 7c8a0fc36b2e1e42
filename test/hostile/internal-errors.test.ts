import { afterEach, describe, expect, it, vi } from 'vitest';
import { callTool, TOOLS } from '../../src/tools/toolset.js';
import { type TestApp, testApp } from '../support/http.js';

// decisions §7: errors are application/problem+json with a stable code; an error Ursa did not
// expect says no more than INTERNAL — never the driver's text, a file path or a stack — to a REST
// caller or an agent (src/http/problem.ts, callTool in src/tools/toolset.ts).

const DRIVER_TEXT = 'SQLITE_CORRUPT: database disk image is malformed at /srv/ursa/secret/ursa.db';

let a: TestApp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await a?.close();
  a = undefined;
});

describe('an unexpected failure leaks nothing (decisions §7)', () => {
  it('answers a REST caller 500 INTERNAL without the driver text or a stack', async () => {
    a = await testApp('sqlite');
    vi.spyOn(a.t.rt.repos.documents, 'get').mockRejectedValue(new Error(DRIVER_TEXT));
    const res = await a.app.inject({
      method: 'GET',
      url: '/brain/acme/project/ops/scheduler/job',
      headers: a.auth(a.tokens.read),
    });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toEqual({
      type: 'https://ursa.dev/errors#internal',
      title: 'INTERNAL',
      status: 500,
      code: 'INTERNAL',
      detail: 'an internal error occurred; the server log has the details',
    });
    expect(res.body).not.toMatch(/SQLITE|\/srv|\bat \w/);
  });

  it('answers an agent an INTERNAL tool error without the driver text', async () => {
    a = await testApp('sqlite');
    vi.spyOn(a.t.rt.repos.documents, 'list').mockRejectedValue(new Error(DRIVER_TEXT));
    const result = await callTool(
      a.t.rt,
      { tenant: 'acme', project: 'ops', user: 'mia' },
      TOOLS,
      'scheduler_get',
      {
        name: 'job',
      },
    );
    expect(result).toEqual({
      ok: false,
      error: { code: 'INTERNAL', message: 'the tool failed inside Ursa; try again later' },
    });
  });
});
