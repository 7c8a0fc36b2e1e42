import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UrsaError } from '../../src/errors/index.js';
import { libraryActor } from '../../src/store/audit.js';
import { documentKeyString } from '../../src/store/document-rows.js';
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
    expect(await docs.put(key, 'one', libraryActor('alice'), 1000)).toEqual({ created: true, version: 1 });
    expect(await docs.put(key, 'two', libraryActor('bob'), 2000)).toEqual({ created: false, version: 2 });
    expect(await docs.put(key, 'two', libraryActor('bob'), 3000)).toEqual({ created: false, version: 2 });
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
    await docs.put({ ...key, path: '_vance/scheduler/a.yaml' }, 'a', libraryActor('u'), 1);
    await docs.put({ ...key, path: '_vance/scheduler/b.yaml' }, 'b', libraryActor('u'), 1);
    await docs.put({ ...key, path: 'xvance/scheduler/c.yaml' }, 'c', libraryActor('u'), 1);
    await docs.put({ ...key, path: '_VANCE/scheduler/d.yaml' }, 'd', libraryActor('u'), 1);
    await docs.put({ ...key, project: 'other', path: '_vance/scheduler/e.yaml' }, 'e', libraryActor('u'), 1);
    expect((await docs.list('acme', 'ops', '_vance/scheduler/')).map((d) => d.path)).toEqual([
      '_vance/scheduler/a.yaml',
      '_vance/scheduler/b.yaml',
    ]);
  });

  it('moves a trashed document under _vance/trash/ and archives its body (spec §10a)', async () => {
    const docs = t.rt.repos.documents;
    await docs.put(key, 'body', libraryActor('u'), 1);
    const trashPath = await docs.trash(key, 5);
    expect(trashPath).toMatch(/^_vance\/trash\/[0-9a-f-]{36}_a\.yaml$/);
    expect(await docs.get(key)).toBeUndefined();
    expect((await docs.get({ ...key, path: trashPath as string }))?.body).toBe('body');
    expect(await docs.trash(key, 6)).toBeUndefined();
  });

  it('gives the body each key had when it was last trashed, never a replaced one (issue #19)', async () => {
    const docs = t.rt.repos.documents;
    const other = { ...key, project: '_tenant' };
    const never = { ...key, path: '_vance/scheduler/never.yaml' };
    await docs.put(key, 'first', libraryActor('u'), 1);
    await docs.trash(key, 2);
    await docs.put(key, 'second', libraryActor('u'), 3);
    await docs.put(key, 'third', libraryActor('u'), 4);
    await docs.trash(key, 5);
    await docs.put(key, 'live again', libraryActor('u'), 6);
    await docs.put(other, 'tenant', libraryActor('u'), 1);
    await docs.trash(other, 2);
    await docs.put(never, 'replaced', libraryActor('u'), 1);
    await docs.put(never, 'live', libraryActor('u'), 2);
    expect(await docs.lastTrashed([key, other, never])).toEqual(
      new Map([
        [documentKeyString(key), 'third'],
        [documentKeyString(other), 'tenant'],
      ]),
    );
    expect(await docs.lastTrashed([])).toEqual(new Map());
  });

  it('restores a trashed scheduler to the path it was trashed from (decisions §2)', async () => {
    const docs = t.rt.repos.documents;
    await docs.put(key, 'cron: x', libraryActor('alice'), 1);
    await docs.put(key, 'cron: y', libraryActor('bob'), 2);
    const trashPath = (await docs.trash(key, 5)) as string;
    expect(await docs.restore({ ...key, path: trashPath }, 9, libraryActor('admin'))).toBe(key.path);
    expect(await docs.get(key)).toMatchObject({
      path: key.path,
      body: 'cron: y',
      // A version the path never had, not the 2 it was trashed at (issue #19).
      version: 3,
      createdBy: 'alice',
      updatedAt: 9,
    });
    expect(await docs.get({ ...key, path: trashPath })).toBeUndefined();
    const row = await t.store.db
      .selectFrom('documents')
      .select(['path', 'trashed_from'])
      .where('path', '=', key.path)
      .executeTakeFirst();
    expect(row).toEqual({ path: key.path, trashed_from: null });
    // Trashed and restored again: each trash remembers where it came from.
    const again = (await docs.trash(key, 10)) as string;
    expect(await docs.restore({ ...key, path: again }, 11, libraryActor('admin'))).toBe(key.path);
  });

  it('refuses to restore over a live document (CONFLICT) and what is not in the trash (NOT_FOUND)', async () => {
    const docs = t.rt.repos.documents;
    await docs.put(key, 'old', libraryActor('u'), 1);
    const trashPath = (await docs.trash(key, 2)) as string;
    await docs.put(key, 'new', libraryActor('u'), 3);
    const conflict = docs.restore({ ...key, path: trashPath }, 4, libraryActor('admin'));
    await expect(conflict).rejects.toThrow(UrsaError);
    await expect(docs.restore({ ...key, path: trashPath }, 4, libraryActor('admin'))).rejects.toMatchObject({
      code: 'CONFLICT',
      field: 'path',
      message: `path: cannot restore ${JSON.stringify(trashPath)}: a live document already holds "_vance/scheduler/a.yaml" in acme/ops`,
    });
    expect((await docs.get(key))?.body).toBe('new');
    expect((await docs.get({ ...key, path: trashPath }))?.body).toBe('old');

    for (const path of ['_vance/trash/nothing_a.yaml', key.path]) {
      await expect(docs.restore({ ...key, path }, 5, libraryActor('admin'))).rejects.toMatchObject({
        code: 'NOT_FOUND',
        field: 'path',
        message: `path: ${JSON.stringify(path)} is not a trashed document of acme/ops`,
      });
    }
    // The trashed document is in (acme, ops) only.
    await expect(
      docs.restore({ ...key, project: 'other', path: trashPath }, 5, libraryActor('admin')),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('sweeps expired documents in bounded batches; without a limit, all of them', async () => {
    const docs = t.rt.repos.documents;
    for (let i = 0; i < 5; i++)
      await docs.put({ ...key, path: `old/${i}.md` }, 'x', libraryActor('u'), 1, 1_000 + i);
    await docs.put({ ...key, path: 'new.md' }, 'x', libraryActor('u'), 1, 10_000);
    expect(await docs.sweepExpired(5_000, 2)).toBe(2);
    expect(await docs.sweepExpired(5_000, 2)).toBe(2);
    expect(await docs.sweepExpired(5_000, 2)).toBe(1);
    expect(await docs.sweepExpired(5_000, 2)).toBe(0);
    expect((await docs.list('acme', 'ops', '')).map((d) => d.path)).toEqual(['new.md']);
    await expect(docs.sweepExpired(5_000, 0)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
    expect(await docs.sweepExpired(20_000)).toBe(1);
  });

  it('sweeps documents whose expiresAt has passed, and only those', async () => {
    const docs = t.rt.repos.documents;
    await docs.put({ ...key, path: 'old.md' }, 'x', libraryActor('u'), 1, 1_000);
    await docs.put({ ...key, path: 'new.md' }, 'x', libraryActor('u'), 1, 10_000);
    await docs.put({ ...key, path: 'keep.md' }, 'x', libraryActor('u'), 1, null);
    expect(await docs.sweepExpired(5_000)).toBe(1);
    expect((await docs.list('acme', 'ops', '')).map((d) => d.path)).toEqual(['keep.md', 'new.md']);
  });
});
