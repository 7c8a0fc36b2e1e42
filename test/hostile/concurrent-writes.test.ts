import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildApp } from '../../src/http/app.js';
import { libraryActor } from '../../src/store/audit.js';
import { callTool, toolsFor } from '../../src/tools/toolset.js';
import { DIALECTS } from '../support/dialects.js';
import { PROBLEM, SCHEDULER_YAML, type TestApp, testApp, WORKFLOW_YAML } from '../support/http.js';
import { snapshot } from '../support/snapshot.js';

// Issue #19: a document write is a compare-and-swap on its version in one transaction with the
// creator/runAs check. Writers race here through two servers on one store (two connection
// pools), as two Ursa processes behind a load balancer would; SQLite serialises them, PostgreSQL
// runs them at once, which is where the unlocked read-then-write gave repeated versions, a
// corrupted archive and a body running as another user's runAs.

const T = 'acme';
const P = 'ops';
const BASE = `/brain/${T}/project/${P}/scheduler`;

/** A scheduler body whose description says who wrote it and which write it was. */
function body(writer: string, n: number, extra = ''): string {
  return `description: ${writer} ${n}\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n${extra}`;
}

/** The 412 problem of a write with `If-Match: "1"` at `path` of project ops, which found `found`. */
function mismatch(path: string, found: string) {
  const detail = `If-Match: expected version 1 at ops/${path}, but ${found}: read it again, then write with the version read`;
  return {
    type: 'https://ursa.dev/errors#version_mismatch',
    title: 'VERSION_MISMATCH',
    status: 412,
    code: 'VERSION_MISMATCH',
    detail,
    errors: [{ path: 'If-Match', message: detail }],
  };
}

describe.each(DIALECTS)('concurrent writes of one document on %s (issue #19)', (dialect) => {
  let a: TestApp;
  let second: FastifyInstance;
  let bob: string;
  beforeAll(async () => {
    a = await testApp(dialect);
    // A second server on the same store, with pools of its own.
    second = await buildApp({ rt: await a.t.peer() });
    await second.ready();
    bob = (await a.t.rt.repos.tokens.create({ tenant: T, role: 'write', user: 'bob' }, a.t.clock.now()))
      .secret;
    await a.t.rt.repos.users.ensure(T, 'bob', a.t.clock.now());
    await a.t.rt.repos.users.ensure(T, 'wes', a.t.clock.now());
  });
  afterAll(async () => {
    await second.close();
    await a.close();
  });

  /** A PUT through the first server (even `n`) or the second (odd). */
  function put(
    name: string,
    yaml: string,
    token: string,
    n = 0,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    return (n % 2 === 0 ? a.app : second).inject({
      method: 'PUT',
      url: `${BASE}/${name}`,
      headers: { ...a.auth(token), 'content-type': 'application/yaml', ...headers },
      payload: yaml,
    });
  }

  function archived(path: string) {
    return a.t.store.db
      .selectFrom('document_archive')
      .select(['version', 'body'])
      .where('tenant', '=', T)
      .where('project', '=', P)
      .where('path', '=', path)
      .orderBy('version')
      .execute();
  }

  it('gives 200 parallel PUTs of one name the versions 1..200 once each, and archives each of the 199 replaced bodies once', {
    timeout: 120_000,
  }, async () => {
    const writes = Array.from({ length: 200 }, (_, n) => body('ada', n));
    const responses = await Promise.all(writes.map((yaml, n) => put('hammered', yaml, a.tokens.admin, n)));
    expect(responses.map((r) => r.statusCode).sort((x, y) => x - y)).toEqual([...Array(199).fill(200), 201]);
    const versions = responses.map((r) => (r.json() as { version: number }).version);
    expect([...versions].sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    // Each response's ETag is the version it wrote.
    expect(responses.map((r) => r.headers.etag)).toEqual(versions.map((v) => `"${v}"`));
    const bodyOf = new Map(versions.map((v, n) => [v, writes[n]]));

    const stored = await a.t.rt.repos.documents.get({
      tenant: T,
      project: P,
      path: '_vance/scheduler/hammered.yaml',
    });
    expect(stored?.version).toBe(200);
    expect(stored?.body).toBe(bodyOf.get(200));
    // Every replaced body exactly once, under the version it had.
    const archive = await archived('_vance/scheduler/hammered.yaml');
    expect(archive.map((r) => Number(r.version))).toEqual(Array.from({ length: 199 }, (_, i) => i + 1));
    for (const row of archive)
      expect(row.body, `version ${row.version}`).toBe(bodyOf.get(Number(row.version)));
  });

  it('lets exactly one of two users racing to create one name without runAs win; the other is refused, and the body runs as its writer', {
    timeout: 60_000,
  }, async () => {
    for (let round = 0; round < 15; round++) {
      const name = `race-${round}`;
      const [wes, bobs] = await Promise.all([
        put(name, body('wes', round), a.tokens.write, 0),
        put(name, body('bob', round), bob, 1),
      ]);
      const codes = [wes.statusCode, bobs.statusCode].sort();
      expect(codes, `round ${round}`).toEqual([201, 403]);
      const loser = wes.statusCode === 403 ? wes : bobs;
      expect(loser.headers['content-type']).toBe(PROBLEM);
      expect(loser.json()).toMatchObject({ code: 'FORBIDDEN', errors: [{ path: 'runAs' }] });
      const stored = await a.t.rt.repos.documents.get({
        tenant: T,
        project: P,
        path: `_vance/scheduler/${name}.yaml`,
      });
      const writer = String((parseYaml(stored?.body ?? '') as { description: string }).description).split(
        ' ',
      )[0];
      expect(stored?.createdBy, `round ${round}`).toBe(writer);
      expect(stored?.version).toBe(1);
    }
  });

  it('lets a racing write that names its own runAs become an update, and the stored body always runs as its own writer', {
    timeout: 60_000,
  }, async () => {
    for (let round = 0; round < 15; round++) {
      const name = `own-${round}`;
      const results = await Promise.all([
        put(name, body('wes', round), a.tokens.write, 0),
        put(name, body('bob', round, 'runAs: bob\n'), bob, 1),
      ]);
      const stored = await a.t.rt.repos.documents.get({
        tenant: T,
        project: P,
        path: `_vance/scheduler/${name}.yaml`,
      });
      const parsed = parseYaml(stored?.body ?? '') as { description: string; runAs?: string };
      const writer = parsed.description.split(' ')[0];
      // Without runAs a scheduler runs as its creator (spec §2).
      expect(parsed.runAs ?? stored?.createdBy, `round ${round}`).toBe(writer);
      const wesResult = results[0].statusCode;
      // wes may create it, or be refused because bob created it first; never replace bob's.
      expect([201, 403]).toContain(wesResult);
      if (stored?.createdBy === 'bob') expect(wesResult).toBe(403);
    }
  });

  it('lets exactly one of 20 parallel PUTs with the same If-Match win; the others answer 412 and change nothing', {
    timeout: 60_000,
  }, async () => {
    expect((await put('guarded', body('ada', 0), a.tokens.admin)).statusCode).toBe(201);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        put('guarded', body('ada', n + 1), a.tokens.admin, n, { 'if-match': '"1"' }),
      ),
    );
    expect(responses.map((r) => r.statusCode).sort((x, y) => x - y)).toEqual([200, ...Array(19).fill(412)]);
    const winner = responses.find((r) => r.statusCode === 200) as LightMyRequestResponse;
    expect(winner.headers.etag).toBe('"2"');
    for (const r of responses.filter((x) => x.statusCode === 412)) {
      expect(r.json()).toEqual({
        type: 'https://ursa.dev/errors#version_mismatch',
        title: 'VERSION_MISMATCH',
        status: 412,
        code: 'VERSION_MISMATCH',
        detail: `If-Match: expected version 1 at ops/_vance/scheduler/guarded.yaml, but it is at version 2: read it again, then write with the version read`,
        errors: [
          {
            path: 'If-Match',
            message: `If-Match: expected version 1 at ops/_vance/scheduler/guarded.yaml, but it is at version 2: read it again, then write with the version read`,
          },
        ],
        allowed: '2',
      });
    }
    expect(await archived('_vance/scheduler/guarded.yaml')).toHaveLength(1);
  });

  // Issue #19: a version of a path is never used twice. Versions used to restart at 1 when a path
  // was deleted and written again, so an If-Match or expectedVersion kept from the deleted document
  // matched its successor and a stale write replaced another user's new document (ABA).
  const key = (name: string) => ({ tenant: T, project: P, path: `_vance/scheduler/${name}.yaml` });
  const toolMismatch = (expected: string) => ({
    ok: false,
    error: {
      code: 'VERSION_MISMATCH',
      message: `expectedVersion: expected ${expected} at ops/_vance/scheduler/agent-aba.yaml, but it is at version 2: read it again, then write with the version read`,
    },
  });
  /** Action and version of each entry of GET …/history, oldest first. */
  async function history(name: string): Promise<string[]> {
    const res = await a.request(
      'GET',
      `/brain/${T}/project/${P}/documents/_vance/scheduler/${name}.yaml/history`,
      a.tokens.read,
    );
    expect(res.statusCode).toBe(200);
    const entries = (res.json() as { history: { action: string; version: number }[] }).history;
    return entries.map((h) => `${h.action} ${h.version}`).reverse();
  }

  it('answers 412 to an If-Match kept from a document deleted and made again by another user, and leaves the new document as it is', async () => {
    const wes = await put('reborn', body('wes', 1, 'runAs: wes\n'), a.tokens.write);
    expect([wes.statusCode, wes.headers.etag]).toEqual([201, '"1"']);
    const seen = (await a.request('GET', `${BASE}/reborn`, a.tokens.write)).headers.etag as string;
    expect(seen).toBe('"1"');
    expect((await a.request('DELETE', `${BASE}/reborn`, bob)).statusCode).toBe(200);
    const bobs = await put('reborn', body('bob', 1, 'runAs: bob\n'), bob);
    expect([bobs.statusCode, bobs.headers.etag]).toEqual([201, '"2"']);

    const before = await snapshot(a.t.store);
    const stale = await put('reborn', body('wes', 2, 'runAs: wes\n'), a.tokens.write, 0, {
      'if-match': seen,
    });
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toEqual({
      ...mismatch('_vance/scheduler/reborn.yaml', 'it is at version 2'),
      allowed: '2',
    });
    const staleDelete = await a.request('DELETE', `${BASE}/reborn`, a.tokens.write, undefined, {
      'if-match': seen,
    });
    expect(staleDelete.statusCode).toBe(412);
    expect(await snapshot(a.t.store)).toEqual(before);
    expect(await a.t.rt.repos.documents.get(key('reborn'))).toMatchObject({
      body: body('bob', 1, 'runAs: bob\n'),
      createdBy: 'bob',
      version: 2,
    });
    expect(await history('reborn')).toEqual(['create 1', 'delete 1', 'create 2']);
  });

  it('refuses a tool expectedVersion kept from a document deleted and made again (VERSION_MISMATCH), and expectedVersion 0 still means no document', async () => {
    const tools = toolsFor(false);
    const as = (user: string) => (tool: string, input: unknown) =>
      callTool(a.t.rt, { tenant: T, project: P, user }, tools, tool, input);
    const [wes, bobs] = [as('wes'), as('bob')];
    const yamlOf = (who: string) => body(who, 1, `runAs: ${who}\n`);
    expect(
      await wes('scheduler_set', { name: 'agent-aba', yaml: yamlOf('wes'), expectedVersion: 0 }),
    ).toMatchObject({
      ok: true,
      output: { created: true, version: 1 },
    });
    expect(await bobs('scheduler_delete', { name: 'agent-aba', expectedVersion: 1 })).toMatchObject({
      ok: true,
    });
    expect(
      await bobs('scheduler_set', { name: 'agent-aba', yaml: yamlOf('bob'), expectedVersion: 0 }),
    ).toMatchObject({ ok: true, output: { created: true, version: 2 } });

    const before = await snapshot(a.t.store);
    expect(
      await wes('scheduler_set', {
        name: 'agent-aba',
        yaml: body('wes', 2, 'runAs: wes\n'),
        expectedVersion: 1,
      }),
    ).toEqual(toolMismatch('version 1'));
    expect(await wes('scheduler_delete', { name: 'agent-aba', expectedVersion: 1 })).toEqual(
      toolMismatch('version 1'),
    );
    expect(
      await wes('scheduler_set', { name: 'agent-aba', yaml: yamlOf('wes'), expectedVersion: 0 }),
    ).toEqual(toolMismatch('no document'));
    expect(await snapshot(a.t.store)).toEqual(before);
    expect(await a.t.rt.repos.documents.get(key('agent-aba'))).toMatchObject({
      body: yamlOf('bob'),
      createdBy: 'bob',
      version: 2,
    });

    // Deleted again: expectedVersion 0 creates it, at a version the path never had.
    expect(await bobs('scheduler_delete', { name: 'agent-aba', expectedVersion: 2 })).toMatchObject({
      ok: true,
    });
    expect(
      await wes('scheduler_set', { name: 'agent-aba', yaml: yamlOf('wes'), expectedVersion: 0 }),
    ).toMatchObject({
      ok: true,
      output: { created: true, version: 3 },
    });
  });

  it('gives a document restored from the trash a version its path never had, so no ETag of an earlier document there matches it, and its history only goes up', async () => {
    const docs = a.t.rt.repos.documents;
    expect((await put('phoenix', body('wes', 1), a.tokens.write)).statusCode).toBe(201);
    expect((await put('phoenix', body('wes', 2), a.tokens.write)).statusCode).toBe(200);
    const first = (await a.request('DELETE', `${BASE}/phoenix`, a.tokens.write)).json() as {
      trashPath: string;
    };
    const other = await put('phoenix', body('bob', 1), bob);
    expect([other.statusCode, other.headers.etag]).toEqual([201, '"3"']);
    expect((await a.request('DELETE', `${BASE}/phoenix`, bob)).statusCode).toBe(200);

    expect(
      await docs.restore(
        { tenant: T, project: P, path: first.trashPath },
        a.t.clock.now(),
        libraryActor('admin'),
      ),
    ).toBe(key('phoenix').path);
    expect(await docs.get(key('phoenix'))).toMatchObject({
      body: body('wes', 2),
      createdBy: 'wes',
      version: 4,
    });
    expect((await a.request('GET', `${BASE}/phoenix`, a.tokens.read)).headers.etag).toBe('"4"');
    const before = await snapshot(a.t.store);
    for (const etag of ['"1"', '"2"', '"3"']) {
      const stale = await put('phoenix', body('wes', 9), a.tokens.write, 0, { 'if-match': etag });
      expect([stale.statusCode, (stale.json() as { allowed: string }).allowed], etag).toEqual([412, '4']);
    }
    expect(await snapshot(a.t.store)).toEqual(before);
    const next = await put('phoenix', body('wes', 3), a.tokens.write, 0, { 'if-match': '"4"' });
    expect([next.statusCode, next.headers.etag]).toEqual([200, '"5"']);

    // The history of the path: versions that only ever go up.
    expect(await history('phoenix')).toEqual([
      'create 1',
      'update 2',
      'delete 2',
      'create 3',
      'delete 3',
      'restore 4',
      'update 5',
    ]);
    // Each version written there (create, update, restore) is new: strictly increasing.
    const written = (await history('phoenix'))
      .filter((h) => !h.startsWith('delete'))
      .map((h) => Number(h.split(' ')[1]));
    expect(written).toEqual([1, 2, 3, 4, 5]);
  });

  it('gives 20 parallel creates of a deleted name, through two servers, each a version the name never had, once each', {
    timeout: 60_000,
  }, async () => {
    for (let n = 1; n <= 2; n++) {
      expect((await put('crowd', body('ada', n), a.tokens.admin)).statusCode).toBe(n === 1 ? 201 : 200);
    }
    expect((await a.request('DELETE', `${BASE}/crowd`, a.tokens.admin)).statusCode).toBe(200);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, n) => put('crowd', body('ada', n + 10), a.tokens.admin, n)),
    );
    expect(responses.map((r) => r.statusCode).sort((x, y) => x - y)).toEqual([...Array(19).fill(200), 201]);
    const versions = responses.map((r) => (r.json() as { version: number }).version).sort((x, y) => x - y);
    expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => i + 3));
    expect((await history('crowd')).slice(3)).toEqual(
      versions.map((v) => `${v === 3 ? 'create' : 'update'} ${v}`),
    );
  });
});

describe.each(DIALECTS)('If-Match and ETag on %s (issue #19)', (dialect) => {
  let a: TestApp;
  beforeAll(async () => {
    a = await testApp(dialect);
  });
  afterAll(async () => {
    await a.close();
  });

  it('sends the version as ETag on GET and PUT, and replaces only at the version named by If-Match', async () => {
    const created = await a.request('PUT', `${BASE}/etag`, a.tokens.write, { yaml: SCHEDULER_YAML });
    expect(created.statusCode).toBe(201);
    expect(created.headers.etag).toBe('"1"');
    const read = await a.request('GET', `${BASE}/etag`, a.tokens.read);
    expect(read.headers.etag).toBe('"1"');
    const doc = await a.request(
      'GET',
      `/brain/${T}/project/${P}/documents/_vance/scheduler/etag.yaml`,
      a.tokens.read,
    );
    expect(doc.headers.etag).toBe('"1"');

    const next = SCHEDULER_YAML.replace('0 0 3', '0 0 4');
    const ok = await a.request('PUT', `${BASE}/etag`, a.tokens.write, { yaml: next }, { 'if-match': '"1"' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
    expect(ok.json()).toMatchObject({ version: 2 });

    const before = await snapshot(a.t.store);
    const stale = await a.request(
      'PUT',
      `${BASE}/etag`,
      a.tokens.write,
      { yaml: SCHEDULER_YAML },
      { 'if-match': '"1"' },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.headers['content-type']).toBe(PROBLEM);
    expect(stale.json()).toEqual({
      ...mismatch('_vance/scheduler/etag.yaml', 'it is at version 2'),
      allowed: '2',
    });
    const staleDelete = await a.request('DELETE', `${BASE}/etag`, a.tokens.write, undefined, {
      'if-match': '"1"',
    });
    expect(staleDelete.statusCode).toBe(412);
    expect(await snapshot(a.t.store)).toEqual(before);

    const deleted = await a.request('DELETE', `${BASE}/etag`, a.tokens.write, undefined, {
      'if-match': '"2"',
    });
    expect(deleted.statusCode).toBe(200);
  });

  it('answers 412 to If-Match on a scheduler that does not exist, for PUT and DELETE, and creates nothing', async () => {
    const before = await snapshot(a.t.store);
    const missing = mismatch('_vance/scheduler/ghost.yaml', 'there is no document');
    const put = await a.request(
      'PUT',
      `${BASE}/ghost`,
      a.tokens.write,
      { yaml: SCHEDULER_YAML },
      { 'if-match': '"1"' },
    );
    expect(put.statusCode).toBe(412);
    expect(put.json()).toEqual({ ...missing, allowed: 'no version: the document does not exist' });
    const del = await a.request('DELETE', `${BASE}/ghost`, a.tokens.write, undefined, { 'if-match': '"1"' });
    expect(del.statusCode).toBe(412);
    expect(del.json()).toEqual({ ...missing, allowed: 'no version: the document does not exist' });
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('refuses an If-Match that is not one ETag Ursa sent (400 at If-Match), and writes nothing', async () => {
    await a.request('PUT', `${BASE}/strict`, a.tokens.write, { yaml: SCHEDULER_YAML });
    const before = await snapshot(a.t.store);
    for (const value of ['*', 'W/"1"', '1', '"1", "2"', '"0"', '"x"']) {
      const res = await a.request(
        'PUT',
        `${BASE}/strict`,
        a.tokens.write,
        { yaml: SCHEDULER_YAML.replace('3', '5') },
        {
          'if-match': value,
        },
      );
      expect(res.statusCode, value).toBe(400);
      expect(res.json(), value).toEqual({
        type: 'https://ursa.dev/errors#argument_invalid',
        title: 'ARGUMENT_INVALID',
        status: 400,
        code: 'ARGUMENT_INVALID',
        detail: `If-Match: ${JSON.stringify(value)} is not the ETag of a document version; send the ETag a GET or PUT answered, e.g. "3"`,
        errors: [
          {
            path: 'If-Match',
            message: `If-Match: ${JSON.stringify(value)} is not the ETag of a document version; send the ETag a GET or PUT answered, e.g. "3"`,
          },
        ],
        allowed: 'one ETag as sent by Ursa: a version in double quotes, e.g. "3"',
      });
    }
    expect(await snapshot(a.t.store)).toEqual(before);
  });

  it('honours If-Match on a workflow PUT and sends its version as ETag', async () => {
    const url = `/brain/${T}/project/${P}/workflows/flow`;
    const created = await a.request('PUT', url, a.tokens.write, { yaml: WORKFLOW_YAML });
    expect(created.headers.etag).toBe('"1"');
    expect((await a.request('GET', url, a.tokens.read)).headers.etag).toBe('"1"');
    const before = await snapshot(a.t.store);
    const stale = await a.request(
      'PUT',
      url,
      a.tokens.write,
      { yaml: `${WORKFLOW_YAML}# 2\n` },
      { 'if-match': '"2"' },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'VERSION_MISMATCH', allowed: '1' });
    expect(await snapshot(a.t.store)).toEqual(before);
    const ok = await a.request(
      'PUT',
      url,
      a.tokens.write,
      { yaml: `${WORKFLOW_YAML}# 2\n` },
      { 'if-match': '"1"' },
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
  });

  it('gives the tools an optional expectedVersion: scheduler_get names the version, a stale one is VERSION_MISMATCH and changes nothing', async () => {
    const identity = { tenant: T, project: P, user: 'wes' };
    const tools = toolsFor(false);
    const call = (tool: string, input: unknown) => callTool(a.t.rt, identity, tools, tool, input);
    const yaml = SCHEDULER_YAML.replace('nightly job', 'agent job');
    expect(await call('scheduler_set', { name: 'agent-job', yaml, expectedVersion: 0 })).toMatchObject({
      ok: true,
      output: { created: true, version: 1 },
    });
    expect(await call('scheduler_get', { name: 'agent-job' })).toMatchObject({
      ok: true,
      output: { version: 1 },
    });
    const before = await snapshot(a.t.store);
    const detail = (expected: string, found: string) =>
      `expectedVersion: expected ${expected} at ops/_vance/scheduler/agent-job.yaml, but ${found}: read it again, then write with the version read`;
    expect(await call('scheduler_set', { name: 'agent-job', yaml, expectedVersion: 0 })).toEqual({
      ok: false,
      error: { code: 'VERSION_MISMATCH', message: detail('no document', 'it is at version 1') },
    });
    expect(
      await call('scheduler_set', { name: 'agent-job', yaml: `${yaml}# v2\n`, expectedVersion: 3 }),
    ).toEqual({
      ok: false,
      error: { code: 'VERSION_MISMATCH', message: detail('version 3', 'it is at version 1') },
    });
    expect(await call('scheduler_delete', { name: 'agent-job', expectedVersion: 2 })).toEqual({
      ok: false,
      error: { code: 'VERSION_MISMATCH', message: detail('version 2', 'it is at version 1') },
    });
    expect(await snapshot(a.t.store)).toEqual(before);
    expect(
      await call('scheduler_set', { name: 'agent-job', yaml: `${yaml}# v2\n`, expectedVersion: 1 }),
    ).toMatchObject({
      ok: true,
      output: { created: false, version: 2 },
    });
    expect(await call('scheduler_delete', { name: 'agent-job', expectedVersion: 2 })).toMatchObject({
      ok: true,
    });
  });
});
