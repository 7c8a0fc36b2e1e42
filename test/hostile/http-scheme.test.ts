import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpEngine } from '../../src/engines/http.js';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument } from '../../src/recipes/parse.js';
import { applyDirectory } from '../../src/service/apply.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import { thrown } from '../support/cron.js';
import { httpEngineRequest } from '../support/http-run.js';
import { projectFolder } from '../support/project.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';
import { snapshot } from '../support/snapshot.js';

// The http engine POSTs only to http:// and https:// URLs (README "An http recipe", issue #5): a
// recipe with any other scheme is refused when it is read, and — for a recipe a library user built
// by hand — the engine sends nothing. Field rules in detail: test/recipes/http.test.ts.

const EXAMPLE = 'https://hooks.example.com/briefing';

/** URLs a recipe author might try, and the scheme `new URL` reads in each. */
const HOSTILE_URLS: readonly (readonly [string, string])[] = [
  ['file:///etc/passwd', 'file:'],
  ['FILE:///etc/shadow', 'file:'],
  ['ftp://ftp.example.com/upload', 'ftp:'],
  ['javascript:alert(document.cookie)', 'javascript:'],
  ['gopher://127.0.0.1:6379/_FLUSHALL', 'gopher:'],
  ['data:text/plain;base64,aGVsbG8=', 'data:'],
  ['  file:///etc/passwd', 'file:'],
  ['ws://127.0.0.1:8080/socket', 'ws:'],
  ['blob:https://example.com/uuid', 'blob:'],
  ['jar:file:///x.jar!/', 'jar:'],
];

function recipe(url: string): string {
  return `description: hook\nengine: http\nurl: ${JSON.stringify(url)}\n`;
}

function schemeMessage(scheme: string): string {
  return `has the scheme ${scheme}; only http:// and https:// URLs are allowed, e.g. ${EXAMPLE}`;
}

describe('http recipes refuse every scheme but http and https (README, issue #5)', () => {
  it.each(HOSTILE_URLS)(
    'refuses url %j with RECIPE_INVALID at url, never repeating the URL',
    (url, scheme) => {
      const path = '_vance/recipes/hook.yaml';
      const error = thrown(() =>
        parseRecipeDocument(recipe(url), { name: 'hook', path, source: 'project' }),
      ) as UrsaError;
      expect(error.code).toBe('RECIPE_INVALID');
      expect(error.field).toBe('url');
      expect(error.issues).toEqual([{ path: 'url', message: schemeMessage(scheme) }]);
      expect(error.message).toBe(`${path}: url: ${schemeMessage(scheme)}`);
      expect(error.message).not.toContain(url.trim().slice(scheme.length));
    },
  );

  it('accepts http and https in any letter case', () => {
    for (const url of ['http://127.0.0.1:9/x', 'HTTPS://hooks.example.com/x']) {
      const parsed = parseRecipeDocument(recipe(url), {
        name: 'hook',
        path: '_vance/recipes/hook.yaml',
        source: 'project',
      });
      expect(parsed.url).toBe(url);
    }
  });
});

describe('a hostile http recipe changes nothing and sends nothing (decisions §6)', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('ursa apply reports each such recipe invalid, stores none, and a scheduler naming one is refused', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    const files: Record<string, string> = {};
    for (const [i, [url]] of HOSTILE_URLS.entries()) files[`_vance/recipes/hook${i}.yaml`] = recipe(url);
    files['_vance/scheduler/uses-hook.yaml'] =
      'description: d\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: hook0\n';
    const entries = await applyDirectory(t.rt, projectFolder(files), 'acme', 'ops', libraryActor('ada'));
    for (const [i, [, scheme]] of HOSTILE_URLS.entries()) {
      expect(entries).toContainEqual({
        path: `_vance/recipes/hook${i}.yaml`,
        status: 'invalid',
        message: `_vance/recipes/hook${i}.yaml: url: ${schemeMessage(scheme)}`,
        issues: [{ path: 'url', message: schemeMessage(scheme) }],
      });
    }
    expect(entries).toContainEqual(
      expect.objectContaining({ path: '_vance/scheduler/uses-hook.yaml', status: 'invalid' }),
    );
    expect(await t.rt.repos.documents.list('acme', 'ops', '')).toEqual([]);
  });

  it('refuses a scheduler write whose recipe document in the store has a file: URL, naming the recipe and the field', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    // A recipe that reached the store without validation (written by another tool, say).
    const path = '_vance/recipes/hook.yaml';
    await t.rt.repos.documents.put(
      { tenant: 'acme', project: 'ops', path },
      recipe('file:///etc/passwd'),
      libraryActor('ada'),
      0,
    );
    const before = await snapshot(t.store);
    const caller = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' } as const;
    const error = (await setScheduler(
      t.rt,
      caller,
      'job',
      'description: d\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: hook\n',
    ).catch((e: unknown) => e)) as UrsaError;
    expect(error.code).toBe('RECIPE_INVALID');
    expect(error.message).toBe(`ops/${path}: url: ${schemeMessage('file:')}`);
    expect(await snapshot(t.store)).toEqual(before);
  });

  it.each(HOSTILE_URLS)(
    'the engine sends nothing for a hand-built recipe with url %j',
    async (url, scheme) => {
      const fetch = vi.fn<typeof globalThis.fetch>();
      const engine = createHttpEngine({ fetch });
      expect(await engine.run(httpEngineRequest(url))).toEqual({
        status: 'failed',
        reason: `url ${schemeMessage(scheme)}`,
      });
      expect(fetch).not.toHaveBeenCalled();
    },
  );
});
