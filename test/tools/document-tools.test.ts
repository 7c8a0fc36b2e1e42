import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deleteScheduler, setScheduler } from '../../src/service/schedulers.js';
import { libraryActor } from '../../src/store/audit.js';
import { type AgentIdentity, callTool, TOOLS } from '../../src/tools/toolset.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// Issue #23 item 4: document_list pages newest first with a cursor and says when it stopped short
// (it used to stop at 100 without a word); document_read reads any document the agent may see,
// and what it may not (a hidden scheduler, its runs, the trash) stays as invisible as before.

const agent: AgentIdentity = { tenant: 'acme', project: 'ops', user: 'mia' };
const person = { tenant: 'acme', project: 'ops', user: 'ada', role: 'admin' as const };
const T0 = Date.parse('2026-06-01T08:00:00Z');
const scheduler = (lockMode: string) =>
  `description: d\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\nlockMode: ${lockMode}\n`;

interface Page {
  paths: string[];
  nextCursor: string | null;
  truncated: boolean;
}

describe.each(DIALECTS)('document_list and document_read on %s (issue #23)', (dialect) => {
  let t: TestRuntime;
  const call = (tool: string, input: unknown) => callTool(t.rt, agent, TOOLS, tool, input);
  const put = (path: string, at: number, body = `body of ${path}\n`) =>
    t.rt.repos.documents.put({ tenant: 'acme', project: 'ops', path }, body, libraryActor('ada'), at);
  const page = async (input: Record<string, unknown>): Promise<Page> => {
    const result = await call('document_list', input);
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    return result.output as Page;
  };
  beforeEach(async () => {
    t = await testRuntime('2026-06-01T08:00:00Z', { dialect });
  });
  afterEach(async () => {
    await t.close();
  });

  it('pages over more than 100 documents newest first, ties by path, and says when a page stops short', async () => {
    // 130 notes, two written at each instant: a tie the path breaks.
    const notes = Array.from({ length: 130 }, (_, i) => ({
      path: `notes/${String(i).padStart(3, '0')}.md`,
      at: T0 + Math.floor(i / 2) * 1000,
    }));
    for (const n of notes) await put(n.path, n.at);
    const expected = [...notes].sort((a, b) => b.at - a.at || (a.path < b.path ? -1 : 1)).map((n) => n.path);
    const first = await page({ prefix: 'notes/' });
    expect(first.paths).toEqual(expected.slice(0, 100));
    expect(first.truncated).toBe(true);
    expect(first.nextCursor).toEqual(expect.any(String));
    // A note written between the pages is newer than the cursor: the next page neither repeats nor skips.
    await put('notes/late.md', T0 + 999_000);
    const second = await page({ prefix: 'notes/', cursor: first.nextCursor });
    expect(second).toEqual({ paths: expected.slice(100), nextCursor: null, truncated: false });
    const small = await page({ prefix: 'notes/', limit: 2 });
    expect(small.paths).toEqual(['notes/late.md', expected[0]]);
    expect((await page({ prefix: 'notes/', limit: 2, cursor: small.nextCursor })).paths).toEqual(
      expected.slice(1, 3),
    );
    expect(await call('document_list', { prefix: 'notes/', cursor: 'nonsense' })).toMatchObject({
      ok: false,
      error: { code: 'ARGUMENT_INVALID', message: expect.stringContaining('cursor') },
    });
  });

  it('pages the run logs without the hidden ones taking a place on a page or in the count', async () => {
    await setScheduler(t.rt, person, 'daily', scheduler('full'));
    await setScheduler(t.rt, person, 'secret', scheduler('hidden'));
    const log = (name: string, i: number) => `_vance/logs/scheduler/${name}/${String(i).padStart(3, '0')}.md`;
    for (let i = 0; i < 105; i++) await put(log('daily', i), T0 + i * 1000);
    // Newer than every visible one: a filter after paging would leave the first page short.
    for (let i = 0; i < 20; i++) await put(log('secret', i), T0 + 500_000 + i);
    const first = await page({});
    expect(first.paths).toHaveLength(100);
    expect(first.paths[0]).toBe(log('daily', 104));
    expect(first.truncated).toBe(true);
    const second = await page({ cursor: first.nextCursor });
    expect(second).toEqual({
      paths: [4, 3, 2, 1, 0].map((i) => log('daily', i)),
      nextCursor: null,
      truncated: false,
    });
    expect(await call('document_read', { path: log('secret', 0) })).toEqual({
      ok: false,
      error: {
        code: 'NOT_FOUND',
        message: `no run log ${JSON.stringify(log('secret', 0))}; document_list shows the ones there are`,
      },
    });
  });

  it('reads schedulers it may see, recipes, workflows and notes; never a hidden scheduler or the trash', async () => {
    await setScheduler(t.rt, person, 'open', scheduler('full'));
    await setScheduler(t.rt, person, 'guarded', scheduler('protected'));
    await setScheduler(t.rt, person, 'secret', scheduler('hidden'));
    await setScheduler(t.rt, person, 'gone', scheduler('hidden'));
    await deleteScheduler(t.rt, person, 'gone');
    await put('_vance/recipes/backup.yaml', T0, 'description: b\nengine: noop\n');
    await put('_vance/workflows/w.yaml', T0, 'description: w\nsteps: []\n');
    await put('notes/readme.md', T0);
    await put('_vance/other/x.md', T0);
    const read = (path: string) => call('document_read', { path });
    expect(await read('_vance/scheduler/open.yaml')).toEqual({
      ok: true,
      output: { path: '_vance/scheduler/open.yaml', body: scheduler('full') },
    });
    expect(await read('_vance/scheduler/guarded.yaml')).toMatchObject({ ok: true });
    expect(await read('_vance/recipes/backup.yaml')).toMatchObject({
      ok: true,
      output: { body: 'description: b\nengine: noop\n' },
    });
    expect(await read('_vance/workflows/w.yaml')).toMatchObject({ ok: true });
    expect(await read('notes/readme.md')).toMatchObject({ ok: true });
    // A hidden scheduler answers as one that is not there.
    expect(await read('_vance/scheduler/secret.yaml')).toEqual({
      ok: false,
      error: {
        code: 'NOT_FOUND',
        message: 'no document "_vance/scheduler/secret.yaml"; document_list shows the ones there are',
      },
    });
    const [trashed] = (await t.rt.repos.documents.list('acme', 'ops', '_vance/trash/')).map((d) => d.path);
    for (const path of [trashed as string, '_vance/other/x.md', 'notes/../_vance/trash/x'])
      expect(await read(path)).toMatchObject({ ok: false, error: { code: 'ARGUMENT_INVALID' } });
    expect((await page({ prefix: '' })).paths.sort()).toEqual([
      '_vance/recipes/backup.yaml',
      '_vance/scheduler/guarded.yaml',
      '_vance/scheduler/open.yaml',
      '_vance/workflows/w.yaml',
      'notes/readme.md',
    ]);
  });
});
