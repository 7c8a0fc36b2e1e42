import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/dialects.js';
import { NOT_FOUND, PROBLEM, type TestApp, testApp } from '../support/http.js';

// Issue #23 item 3: a scheduler's earlier versions over REST — read one, write it back (a
// scheduler write: validated, audited, conditional on If-Match) — and the trash restored, on both stores.

const P = '/brain/acme/project/ops';
const PATH = '_vance/scheduler/job.yaml';
const V1 = 'description: first\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n';
const V2 = 'description: second\ncron: "0 0 4 * * *"\ntimezone: UTC\nrecipe: noop\n';

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('scheduler versions and the trash over REST on %s (issue #23)', (dialect) => {
  /** job at version 2 (V2), its version 1 (V1) in the archive. */
  async function twoVersions(): Promise<TestApp> {
    a = await testApp(dialect);
    expect((await a.request('PUT', `${P}/scheduler/job`, a.tokens.write, { yaml: V1 })).statusCode).toBe(201);
    expect((await a.request('PUT', `${P}/scheduler/job`, a.tokens.write, { yaml: V2 })).statusCode).toBe(200);
    return a;
  }
  const audit = async (t: TestApp) =>
    (
      await t.t.store.db
        .selectFrom('audit_log')
        .select(['action', 'subject', 'user_name', 'version'])
        .orderBy('id', 'desc')
        .execute()
    ).map((r) => [r.action, r.subject, r.user_name, Number(r.version)]);

  it('reads an archived version and the live one, each with whether it is current', async () => {
    const t = await twoVersions();
    const old = await t.request('GET', `${P}/scheduler/job/versions/1`, t.tokens.read);
    expect(old.statusCode).toBe(200);
    expect(old.json()).toEqual({ name: 'job', path: PATH, version: 1, yaml: V1, current: false });
    const live = await t.request('GET', `${P}/scheduler/job/versions/2`, t.tokens.read);
    expect(live.json()).toEqual({ name: 'job', path: PATH, version: 2, yaml: V2, current: true });
  });

  it('answers a version it never had with 404 naming the version, and a bad one with 400', async () => {
    const t = await twoVersions();
    const missing = await t.request('GET', `${P}/scheduler/job/versions/7`, t.tokens.read);
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe(PROBLEM);
    expect(missing.json()).toMatchObject({
      code: 'NOT_FOUND',
      detail: 'version: scheduler "job" of acme/ops has no version 7',
    });
    const bad = await t.request('GET', `${P}/scheduler/job/versions/zero`, t.tokens.read);
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('writes version 1 back as version 3, audited as an update by the caller, the schedule picked up', async () => {
    const t = await twoVersions();
    const restored = await t.request('POST', `${P}/scheduler/job/restore`, t.tokens.write, { version: 1 });
    expect(restored.statusCode).toBe(200);
    expect(restored.headers.etag).toBe('"3"');
    expect(restored.json()).toMatchObject({ path: PATH, created: false, version: 3 });
    const detail = await t.request('GET', `${P}/scheduler/job`, t.tokens.read);
    expect(detail.json()).toMatchObject({ version: 3, yaml: V1 });
    // 03:00 UTC again (version 2 said 04:00): the live schedule follows the restored document.
    expect(detail.json().nextRunAt).toBe('2026-06-02T03:00:00Z');
    expect((await audit(t))[0]).toEqual(['update', PATH, 'wes', 3]);
  });

  it('restores only while the document is at the If-Match version (412 otherwise, nothing written)', async () => {
    const t = await twoVersions();
    const stale = await t.request(
      'POST',
      `${P}/scheduler/job/restore`,
      t.tokens.write,
      { version: 1 },
      {
        'if-match': '"1"',
      },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.json().code).toBe('VERSION_MISMATCH');
    expect((await t.request('GET', `${P}/scheduler/job`, t.tokens.read)).json().version).toBe(2);
    const fresh = await t.request(
      'POST',
      `${P}/scheduler/job/restore`,
      t.tokens.write,
      { version: 1 },
      {
        'if-match': '"2"',
      },
    );
    expect(fresh.statusCode).toBe(200);
  });

  it('refuses a restore with a read token (403) and of another tenant like a missing resource (404)', async () => {
    const t = await twoVersions();
    const read = await t.request('POST', `${P}/scheduler/job/restore`, t.tokens.read, { version: 1 });
    expect([read.statusCode, read.json().code]).toEqual([403, 'FORBIDDEN']);
    const other = await t.request('GET', `${P}/scheduler/job/versions/1`, t.tokens.other);
    expect([other.statusCode, other.json()]).toEqual([404, NOT_FOUND]);
    expect((await t.request('GET', `${P}/scheduler/job`, t.tokens.read)).json().version).toBe(2);
  });

  it('puts a deleted scheduler back from the trash, audited as a restore; a second restore is 404', async () => {
    const t = await twoVersions();
    const deleted = await t.request('DELETE', `${P}/scheduler/job`, t.tokens.write);
    const { trashPath } = deleted.json() as { trashPath: string };
    const listed = await t.request('GET', `${P}/documents?prefix=_vance/trash/`, t.tokens.read);
    expect(listed.json().documents.map((d: { path: string }) => d.path)).toEqual([trashPath]);
    const restored = await t.request('POST', `${P}/documents/restore`, t.tokens.write, { path: trashPath });
    expect(restored.statusCode).toBe(200);
    expect(restored.json()).toEqual({ path: PATH, trashPath });
    expect((await t.request('GET', `${P}/scheduler/job`, t.tokens.read)).json()).toMatchObject({ yaml: V2 });
    expect((await audit(t))[0]).toEqual(['restore', PATH, 'wes', 3]);
    const again = await t.request('POST', `${P}/documents/restore`, t.tokens.write, { path: trashPath });
    expect([again.statusCode, again.json().code]).toEqual([404, 'NOT_FOUND']);
  });

  it('refuses to restore over a live document with 409, and changes nothing', async () => {
    const t = await twoVersions();
    const { trashPath } = (await t.request('DELETE', `${P}/scheduler/job`, t.tokens.write)).json() as {
      trashPath: string;
    };
    expect((await t.request('PUT', `${P}/scheduler/job`, t.tokens.write, { yaml: V1 })).statusCode).toBe(201);
    const clash = await t.request('POST', `${P}/documents/restore`, t.tokens.write, { path: trashPath });
    expect([clash.statusCode, clash.json().code]).toEqual([409, 'CONFLICT']);
    expect((await t.request('GET', `${P}/scheduler/job`, t.tokens.read)).json().yaml).toBe(V1);
  });
});
