import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboxKind, NewInboxItem } from '../../src/store/index.js';
import { DIALECTS } from '../support/dialects.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

const T = 'acme';
const AT = Date.parse('2026-03-28T12:00:00Z');

function item(user: string, n: number, extra: Partial<NewInboxItem> = {}): NewInboxItem {
  return {
    tenant: T,
    user,
    kind: 'run-failed',
    title: `item ${n}`,
    body: `body ${n}`,
    createdAt: AT + n,
    ...extra,
  };
}

// decisions §2: the inbox, on a real SQLite file and a real PostgreSQL.
describe.each(DIALECTS)('inbox on %s (decisions §2)', (dialect) => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await testRuntime('2026-03-28T12:00:00Z', { dialect });
  });
  afterEach(() => t.close());

  it('adds items unread and lists them newest first with every field', async () => {
    const inbox = t.rt.repos.inbox;
    const first = await inbox.add(item('alice', 1));
    const second = await inbox.add({
      tenant: T,
      user: 'alice',
      kind: 'document-invalid',
      title: 'heartbeat.yaml is invalid',
      body: 'cron: "61 * * * * *": second must be 0-59',
      project: 'ops',
      scheduler: 'heartbeat',
      correlationId: 'run_1',
      logPath: '_vance/logs/scheduler/heartbeat/x.md',
      createdAt: AT + 2,
    });
    expect(second).toBeGreaterThan(first);
    expect(await inbox.list(T, 'alice', { limit: 10 })).toEqual([
      {
        id: second,
        tenant: T,
        user: 'alice',
        kind: 'document-invalid',
        title: 'heartbeat.yaml is invalid',
        body: 'cron: "61 * * * * *": second must be 0-59',
        project: 'ops',
        scheduler: 'heartbeat',
        correlationId: 'run_1',
        logPath: '_vance/logs/scheduler/heartbeat/x.md',
        createdAt: AT + 2,
        readAt: null,
      },
      {
        id: first,
        tenant: T,
        user: 'alice',
        kind: 'run-failed',
        title: 'item 1',
        body: 'body 1',
        project: null,
        scheduler: null,
        correlationId: null,
        logPath: null,
        createdAt: AT + 1,
        readAt: null,
      },
    ]);
    expect(await inbox.unreadCount(T, 'alice')).toBe(2);
    expect(await inbox.unreadCount(T, 'bob')).toBe(0);
  });

  it('pages newest first by id: 5 items at 2 a page are 2+2+1', async () => {
    const inbox = t.rt.repos.inbox;
    for (let n = 1; n <= 5; n++) await inbox.add(item('alice', n));
    await inbox.add(item('bob', 99));
    const titles: string[][] = [];
    let beforeId: number | undefined;
    for (;;) {
      const page = await inbox.list(
        T,
        'alice',
        beforeId === undefined ? { limit: 2 } : { limit: 2, beforeId },
      );
      if (page.length === 0) break;
      titles.push(page.map((i) => i.title));
      beforeId = page[page.length - 1]?.id;
    }
    expect(titles).toEqual([['item 5', 'item 4'], ['item 3', 'item 2'], ['item 1']]);
  });

  it('marks only the items of that user and tenant read, once, and filters unread ones', async () => {
    const inbox = t.rt.repos.inbox;
    const a1 = await inbox.add(item('alice', 1));
    const a2 = await inbox.add(item('alice', 2));
    const a3 = await inbox.add(item('alice', 3, { kind: 'one-shot-late' }));
    const b1 = await inbox.add(item('bob', 4));
    const other = await inbox.add(item('alice', 5, { tenant: 'globex' }));

    // Bob's id, another tenant's id and an unknown id are not alice's to mark.
    expect(await inbox.markRead(T, 'alice', [a1, a2, b1, other, 9999], AT + 100)).toBe(2);
    expect(await inbox.markRead(T, 'alice', [a1, a1, a2], AT + 200)).toBe(0);
    expect(await inbox.markRead(T, 'alice', [], AT + 200)).toBe(0);
    expect(await inbox.unreadCount(T, 'alice')).toBe(1);
    expect(await inbox.unreadCount(T, 'bob')).toBe(1);
    expect(await inbox.unreadCount('globex', 'alice')).toBe(1);

    const unread = await inbox.list(T, 'alice', { unreadOnly: true, limit: 10 });
    expect(unread.map((i) => [i.id, i.kind])).toEqual([[a3, 'one-shot-late']]);
    const all = await inbox.list(T, 'alice', { limit: 10 });
    // The first markRead set readAt; the second one left it.
    expect(all.map((i) => [i.id, i.readAt])).toEqual([
      [a3, null],
      [a2, AT + 100],
      [a1, AT + 100],
    ]);
    expect((await inbox.list(T, 'bob', { limit: 10 })).map((i) => [i.id, i.readAt])).toEqual([[b1, null]]);
    expect((await inbox.list('globex', 'alice', { limit: 10 })).map((i) => i.id)).toEqual([other]);
  });

  it('marks many ids in one call', async () => {
    const inbox = t.rt.repos.inbox;
    const ids: number[] = [];
    for (let n = 0; n < 520; n++) ids.push(await inbox.add(item('alice', n)));
    expect(await inbox.markRead(T, 'alice', ids, AT)).toBe(520);
    expect(await inbox.unreadCount(T, 'alice')).toBe(0);
  });

  it('lists a question with its answer, who gave it and when (null until answered); other kinds without', async () => {
    const inbox = t.rt.repos.inbox;
    const failed = await inbox.add(item('alice', 1));
    const asked = await inbox.add(
      item('alice', 2, { kind: 'question', body: 'Which branch?\n<b>main</b>?' }),
    );
    const open = (await inbox.list(T, 'alice', { limit: 10 })).map((i) => [
      i.id,
      i.answer,
      i.answeredBy,
      i.answeredAt,
    ]);
    expect(open).toEqual([
      [asked, null, null, null],
      [failed, undefined, undefined, undefined],
    ]);
    expect(await t.rt.repos.inboxAnswers.answer(T, 'alice', asked, 'main', 'ada', AT + 50)).toEqual({
      kind: 'answered',
    });
    const [question] = await inbox.list(T, 'alice', { limit: 1 });
    expect(question).toMatchObject({
      id: asked,
      answer: 'main',
      answeredBy: 'ada',
      answeredAt: AT + 50,
      readAt: AT + 50,
    });
  });

  it('refuses an unknown kind and a limit below 1', async () => {
    const inbox = t.rt.repos.inbox;
    await expect(inbox.add(item('alice', 1, { kind: 'spam' as InboxKind }))).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
    });
    await expect(inbox.list(T, 'alice', { limit: 0 })).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
    expect(await inbox.unreadCount(T, 'alice')).toBe(0);
  });
});
