import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { libraryActor } from '../../src/store/audit.js';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, PROBLEM, type TestApp, testApp, WORKFLOW_YAML } from '../support/http.js';

// Issue #23 item 4: recipes (and workflow deletes) over REST, with the validation, conditional
// writes and audit trail of a scheduler write; a tenant never sees another tenant's recipes.

const P = '/brain/acme/project/ops';
const RECIPE = 'description: Back up the database\nengine: shell\ncommand: [/usr/local/bin/backup, --full]\n';
const YAML = { 'content-type': 'application/yaml' };

describe.each(DIALECTS)('recipe endpoints on %s (issue #23)', (dialect) => {
  let a: TestApp;
  beforeEach(async () => {
    a = await testApp(dialect);
  });
  afterEach(async () => {
    await a.close();
  });

  it('writes a recipe from YAML text, lists it beside the built-in ones and gets it with its ETag', async () => {
    const put = await a.request('PUT', `${P}/recipes/backup`, a.tokens.write, RECIPE, YAML);
    expect(put.statusCode).toBe(201);
    expect(put.headers.etag).toBe('"1"');
    expect(put.json()).toEqual({ path: '_vance/recipes/backup.yaml', created: true, version: 1 });
    const list = await a.request('GET', `${P}/recipes`, a.tokens.read);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      recipes: [
        {
          name: 'backup',
          description: 'Back up the database',
          engine: 'shell',
          source: 'project',
          path: '_vance/recipes/backup.yaml',
          version: 1,
          updatedAt: '2026-06-01T08:00:00Z',
        },
        {
          name: 'noop',
          description: 'Does nothing; for tests and benchmarks.',
          engine: 'noop',
          source: 'builtin',
          path: null,
          version: null,
          updatedAt: null,
        },
      ],
      invalid: [],
    });
    const got = await a.request('GET', `${P}/recipes/backup`, a.tokens.read);
    expect(got.headers.etag).toBe('"1"');
    expect(got.json()).toMatchObject({ name: 'backup', yaml: RECIPE, createdBy: 'wes', invalid: null });
    const builtin = await a.request('GET', `${P}/recipes/noop`, a.tokens.read);
    expect(builtin.headers.etag).toBeUndefined();
    expect(builtin.json()).toMatchObject({
      source: 'builtin',
      engine: 'noop',
      version: null,
      createdBy: null,
    });
  });

  it('refuses a broken recipe with problem+json naming each field, and writes nothing', async () => {
    const res = await a.request('PUT', `${P}/recipes/backup`, a.tokens.write, {
      yaml: 'description: x\nengine: shell\ncolor: red\n',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.json()).toMatchObject({ code: 'RECIPE_INVALID' });
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['color', 'command']);
    expect(await a.t.rt.repos.documents.list('acme', 'ops', '_vance/recipes/')).toEqual([]);
    const name = await a.request('PUT', `${P}/recipes/bad%20name`, a.tokens.write, { yaml: RECIPE });
    expect(name.statusCode).toBe(400);
  });

  it('writes only at the version If-Match names, and deletes to the trash as the caller (audited)', async () => {
    await a.request('PUT', `${P}/recipes/backup`, a.tokens.write, { yaml: RECIPE });
    const stale = await a.request(
      'PUT',
      `${P}/recipes/backup`,
      a.tokens.write,
      { yaml: RECIPE },
      { 'if-match': '"2"' },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.json().code).toBe('VERSION_MISMATCH');
    const ok = await a.request(
      'PUT',
      `${P}/recipes/backup`,
      a.tokens.admin,
      { yaml: RECIPE.replace('--full', '--fast') },
      { 'if-match': '"1"' },
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ path: '_vance/recipes/backup.yaml', created: false, version: 2 });
    expect(
      (await a.request('DELETE', `${P}/recipes/backup`, a.tokens.write, undefined, { 'if-match': '"1"' }))
        .statusCode,
    ).toBe(412);
    const del = await a.request('DELETE', `${P}/recipes/backup`, a.tokens.write);
    expect(del.statusCode).toBe(200);
    const { trashPath } = del.json() as { trashPath: string };
    expect(trashPath).toMatch(/^_vance\/trash\/.*backup\.yaml$/);
    const history = await a.request(
      'GET',
      `${P}/documents/_vance/recipes/backup.yaml/history`,
      a.tokens.read,
    );
    expect(
      history
        .json()
        .history.map((h: { action: string; user: string; interface: string }) => [
          h.action,
          h.user,
          h.interface,
        ]),
    ).toEqual([
      ['delete', 'wes', 'rest'],
      ['update', 'ada', 'rest'],
      ['create', 'wes', 'rest'],
    ]);
    const gone = await a.request('GET', `${P}/recipes/backup`, a.tokens.read);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual(NOT_FOUND);
    expect((await a.request('DELETE', `${P}/recipes/backup`, a.tokens.write)).json()).toEqual(NOT_FOUND);
  });

  it('shows _tenant recipes under the project one of the same name, and a broken document with why', async () => {
    const now = a.t.clock.now();
    const put = (project: string, path: string, body: string) =>
      a.t.rt.repos.documents.put({ tenant: 'acme', project, path }, body, libraryActor('ada'), now);
    await put('_tenant', '_vance/recipes/backup.yaml', RECIPE.replace('Back up', 'Tenant back up'));
    await put('_tenant', '_vance/recipes/shared.yaml', 'description: shared\nengine: noop\n');
    await put('ops', '_vance/recipes/backup.yaml', RECIPE);
    await put('ops', '_vance/recipes/broken.yaml', 'description: b\n');
    const list = (await a.request('GET', `${P}/recipes`, a.tokens.read)).json();
    expect(list.recipes.map((r: { name: string; source: string }) => [r.name, r.source])).toEqual([
      ['backup', 'project'],
      ['noop', 'builtin'],
      ['shared', 'tenant'],
    ]);
    expect(list.invalid).toEqual([
      { path: 'ops/_vance/recipes/broken.yaml', message: expect.stringContaining('engine') },
    ]);
    const shared = await a.request('GET', `${P}/recipes/shared`, a.tokens.read);
    expect(shared.headers.etag).toBeUndefined();
    expect(shared.json()).toMatchObject({ source: 'tenant', engine: 'noop' });
    const broken = (await a.request('GET', `${P}/recipes/broken`, a.tokens.read)).json();
    expect(broken).toMatchObject({ engine: null, description: null, yaml: 'description: b\n' });
    expect(broken.invalid).toContain('engine');
  });

  it("never shows a tenant another tenant's recipes: the same 404 as a missing one, and nothing changes", async () => {
    await a.request('PUT', `${P}/recipes/backup`, a.tokens.write, { yaml: RECIPE });
    for (const [method, payload] of [
      ['GET', undefined],
      ['PUT', { yaml: RECIPE }],
      ['DELETE', undefined],
    ] as const) {
      const res = await a.request(method, `${P}/recipes/backup`, a.tokens.other, payload);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    }
    expect((await a.request('GET', `${P}/recipes`, a.tokens.other)).json()).toEqual(NOT_FOUND);
    const theirs = (await a.request('GET', '/brain/other/project/ops/recipes', a.tokens.other)).json();
    expect(theirs.recipes.map((r: { name: string }) => r.name)).toEqual(['noop']);
    expect(await a.t.rt.repos.documents.list('acme', 'ops', '_vance/recipes/')).toHaveLength(1);
  });

  it('needs a write token to write or delete', async () => {
    const res = await a.request('PUT', `${P}/recipes/backup`, a.tokens.read, { yaml: RECIPE });
    expect(res.statusCode).toBe(403);
    expect((await a.request('DELETE', `${P}/recipes/noop`, a.tokens.read)).statusCode).toBe(403);
  });

  it('deletes a workflow to the trash, audited, and only at the version If-Match names', async () => {
    await a.request('PUT', `${P}/workflows/w`, a.tokens.write, { yaml: WORKFLOW_YAML });
    expect(
      (await a.request('DELETE', `${P}/workflows/w`, a.tokens.write, undefined, { 'if-match': '"2"' }))
        .statusCode,
    ).toBe(412);
    const del = await a.request('DELETE', `${P}/workflows/w`, a.tokens.admin);
    expect(del.statusCode).toBe(200);
    expect(del.json().trashPath).toMatch(/^_vance\/trash\/.*w\.yaml$/);
    expect((await a.request('GET', `${P}/workflows/w`, a.tokens.read)).statusCode).toBe(404);
    const history = (
      await a.request('GET', `${P}/documents/_vance/workflows/w.yaml/history`, a.tokens.read)
    ).json();
    expect(history.history[0]).toMatchObject({ action: 'delete', user: 'ada', interface: 'rest' });
    expect((await a.request('DELETE', `${P}/workflows/w`, a.tokens.admin)).json()).toEqual(NOT_FOUND);
  });
});
