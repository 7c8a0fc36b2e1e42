import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WEB_ROOT } from '../../src/http/routes/web.js';
import { type TestApp, testApp } from '../support/http.js';
import { PAGE } from './server.js';

// src/http/routes/web.ts: the built page at `/` without a token (issue #9), through inject().

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe('the web page routes', () => {
  it('serves dist/web/scheduler.html at / and /scheduler.html without a token, with a strict CSP', async () => {
    expect(join(WEB_ROOT, 'scheduler.html')).toBe(PAGE);
    a = await testApp();
    for (const url of ['/', '/scheduler.html']) {
      const res = await a.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.body).toContain('<div id="app"></div>');
      // Nothing from elsewhere: every script and style comes from /assets/.
      expect(res.body).not.toMatch(/(src|href)="https?:/);
    }
  });

  it('serves the hashed assets for good, and nothing outside dist/web/assets', async () => {
    a = await testApp();
    const script = readdirSync(join(WEB_ROOT, 'assets')).find((f) => f.endsWith('.js'));
    expect(script).toBeDefined();
    const res = await a.app.inject({ method: 'GET', url: `/assets/${script}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await a.app.inject({ method: 'GET', url: '/assets/nothing.js' })).statusCode).toBe(404);
    const outside = await a.app.inject({ method: 'GET', url: '/assets/..%2Fscheduler.html' });
    expect([outside.statusCode, outside.json().code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await a.app.inject({ method: 'GET', url: '/assets/.env' })).statusCode).toBe(400);
    // The API still wants its token.
    expect((await a.app.inject({ method: 'GET', url: '/brain/acme/project/ops/scheduler' })).statusCode).toBe(
      401,
    );
  });
});
