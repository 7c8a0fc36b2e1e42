import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const key = { tenant: 'acme', project: 'ops', path: '_vance/scheduler/a.yaml' };

// decisions §2: the document layer, on a real SQLite file and a real PostgreSQL.
describe.each(DIALECTS)('documents on %s (decisions §2)', (dialect) => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await testRuntime('2026-01-01T00:00:00Z', { dialect });
  });
  afterEach(() => t.close());

  it('creates version 1, then keeps every replaced body in the archive', async () => {
    const docs = t.rt.repos.documents;
    expect(await docs.put(key, 'one', 'alice', 1000)).toEqual({ created: true, version: 1 });
    expect(await docs.put(key, 'two', 'bob', 2000)).toEqual({ created: false, version: 2 });
    expect(await docs.put(key, 'two', 'bob', 3000)).toEqual({ created: false, version: 2 });
    const doc = await docs.get(key);
    expect(doc).toMatchObject({
      body: 'two',
      version: 2,
      createdBy: 'alice',
      createdAt: 1000,
      updatedAt: 2000,
    });
    const archive = await t.store.db.selectFrom('document_archive').selectAll().execute();
    expect(archive.map((a) => [a.version, a.body, a.reason])).toEqual([[1, 'one', 'replaced']]);
  });

  it('lists by exact, case-sensitive prefix (an underscore is not a wildcard)', async () => {
    const docs = t.rt.repos.documents;
    await docs.put({ ...key, path: '_vance/scheduler/a.yaml' }, 'a', 'u', 1);
    await docs.put({ ...key, path: '_vance/scheduler/b.yaml' }, 'b', 'u', 1);
    await docs.put({ ...key, path: 'xvance/scheduler/c.yaml' }, 'c', 'u', 1);
    await docs.put({ ...key, path: '_VANCE/scheduler/d.yaml' }, 'd', 'u', 1);
    await docs.put({ ...key, project: 'other', path: '_vance/scheduler/e.yaml' }, 'e', 'u', 1);
    expect((await docs.list('acme', 'ops', '_vance/scheduler/')).map((d) => d.path)).toEqual([
      '_vance/scheduler/a.yaml',
      '_vance/scheduler/b.yaml',
    ]);
  });

  it('moves a trashed document under _vance/trash/ and archives its body (spec §10a)', async () => {
    const docs = t.rt.repos.documents;
    await docs.put(key, 'body', 'u', 1);
    const trashPath = await docs.trash(key, 5);
    expect(trashPath).toMatch(/^_vance\/trash\/[0-9a-f-]{36}_a\.yaml$/);
    expect(await docs.get(key)).toBeUndefined();
    expect((await docs.get({ ...key, path: trashPath as string }))?.body).toBe('body');
    expect(await docs.trash(key, 6)).toBeUndefined();
  });

  it('sweeps documents whose expiresAt has passed, and only those', async () => {
    const docs = t.rt.repos.documents;
    await docs.put({ ...key, path: 'old.md' }, 'x', 'u', 1, 1_000);
    await docs.put({ ...key, path: 'new.md' }, 'x', 'u', 1, 10_000);
    await docs.put({ ...key, path: 'keep.md' }, 'x', 'u', 1, null);
    expect(await docs.sweepExpired(5_000)).toBe(1);
    expect((await docs.list('acme', 'ops', '')).map((d) => d.path)).toEqual(['keep.md', 'new.md']);
  });
});
