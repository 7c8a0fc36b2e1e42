import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/dialects.js';
import { PROBLEM, type TestApp, testApp } from '../support/http.js';

// Issue #22 item 1: pause and resume with a note, over REST on both stores. The pause is the
// document's `enabled: false`, written through the document path; the note, who and when are
// kept beside it, shown by list and get, and given as the reason a fire is refused.

const BASE = '/brain/acme/project/ops/scheduler';
const TENANT_BASE = '/brain/acme/project/_tenant/scheduler';
const PATH = '_vance/scheduler/job.yaml';
const YAML =
  '# the nightly export\ndescription: nightly job\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\n';
const PAUSED_AT = '2026-06-01T08:00:00Z';

let a: TestApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

describe.each(DIALECTS)('pause and resume over REST on %s (issue #22)', (dialect) => {
  async function app(): Promise<TestApp> {
    a = await testApp(dialect);
    expect((await a.request('PUT', `${BASE}/job`, a.tokens.write, { yaml: YAML })).statusCode).toBe(201);
    return a;
  }
  const document = (t: TestApp) => t.t.rt.repos.documents.get({ tenant: 'acme', project: 'ops', path: PATH });
  const summary = async (t: TestApp) =>
    (await t.request('GET', BASE, t.tokens.read))
      .json()
      .schedulers.find((s: { name: string }) => s.name === 'job');
  const audit = async (t: TestApp) =>
    (
      await t.t.store.db
        .selectFrom('audit_log')
        .select(['action', 'subject', 'user_name', 'detail'])
        .orderBy('id', 'desc')
        .execute()
    ).map((r) => [r.action, r.subject, r.user_name, r.detail === null ? null : JSON.parse(r.detail)]);
  const runCount = async (t: TestApp) =>
    (await t.t.store.db.selectFrom('runs').select('correlation_id').execute()).length;

  it('pauses with a note: enabled: false in the document (comments kept, archived, audited), the note in list and get', async () => {
    const t = await app();
    const paused = await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'vendor API down' });
    expect(paused.statusCode).toBe(200);
    expect(paused.headers.etag).toBe('"2"');
    const pause = { note: 'vendor API down', by: 'wes', at: PAUSED_AT };
    expect(paused.json()).toEqual({ name: 'job', version: 2, enabled: false, paused: pause });
    expect((await document(t))?.body).toBe(`${YAML}enabled: false\n`);

    expect(await summary(t)).toMatchObject({ enabled: false, paused: pause });
    const detail = await t.request('GET', `${BASE}/job`, t.tokens.read);
    expect(detail.json()).toMatchObject({ version: 2, paused: pause });
    const archived = await t.t.store.db.selectFrom('document_archive').select(['version', 'body']).execute();
    expect(archived).toEqual([{ version: 1, body: YAML }]);
    expect(await audit(t)).toEqual([
      ['pause', 'job', 'wes', { note: 'vendor API down' }],
      ['update', PATH, 'wes', null],
      ['create', PATH, 'wes', null],
    ]);
  });

  it('refuses a fire of a paused scheduler with 409 and its note, and records nothing', async () => {
    const t = await app();
    await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'vendor API down' });
    const fire = await t.request('POST', `${BASE}/job/fire`, t.tokens.write);
    expect(fire.statusCode).toBe(409);
    expect(fire.headers['content-type']).toBe(PROBLEM);
    expect(fire.json()).toMatchObject({
      code: 'SCHEDULER_PAUSED',
      detail: `scheduler "job" was paused by wes at ${PAUSED_AT}: vendor API down; resume it to fire it`,
    });
    expect(await runCount(t)).toBe(0);
  });

  it('resumes: enabled: true, the note gone, fires again', async () => {
    const t = await app();
    await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'vendor API down' });
    const resumed = await t.request('POST', `${BASE}/job/resume`, t.tokens.admin);
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toEqual({ name: 'job', version: 3, enabled: true, paused: null });
    expect((await document(t))?.body).toBe(`${YAML}enabled: true\n`);
    expect(await summary(t)).toMatchObject({ enabled: true, paused: null });
    expect((await t.request('POST', `${BASE}/job/fire`, t.tokens.write)).statusCode).toBe(202);
    expect(await runCount(t)).toBe(1);
    // Resuming again changes nothing: no new version, no second resume in the audit trail.
    const again = await t.request('POST', `${BASE}/job/resume`, t.tokens.admin);
    expect(again.json()).toEqual({ name: 'job', version: 3, enabled: true, paused: null });
    expect((await audit(t)).filter(([action]) => action === 'resume')).toHaveLength(1);
  });

  it('keeps the note out of reach of a PUT: one that keeps the scheduler disabled keeps it, one that enables it ends the pause', async () => {
    const t = await app();
    await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'vendor API down' });
    // A field the document schema does not know is refused, so no note comes from the YAML.
    const forged = await t.request('PUT', `${BASE}/job`, t.tokens.write, {
      yaml: `${YAML}enabled: false\npaused: { note: forged }\n`,
    });
    expect(forged.statusCode).toBe(400);
    const edited = `${YAML.replace('nightly job', 'nightly job, edited')}enabled: false\n`;
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml: edited })).statusCode).toBe(200);
    expect((await summary(t)).paused).toMatchObject({ note: 'vendor API down' });
    const enabled = `${YAML}enabled: true\n`;
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml: enabled })).statusCode).toBe(200);
    expect((await summary(t)).paused).toBeNull();
    // Disabled again by a PUT: disabled, not paused, and a fire still runs it.
    expect((await t.request('PUT', `${BASE}/job`, t.tokens.write, { yaml: edited })).statusCode).toBe(200);
    expect(await summary(t)).toMatchObject({ enabled: false, paused: null });
    expect((await t.request('POST', `${BASE}/job/fire`, t.tokens.write)).statusCode).toBe(202);
  });

  it('runs nothing that falls due in a pause, not even as a catch-up, and fires from the next occurrence after the resume', async () => {
    const t = await app();
    const worker = t.t.worker();
    await worker.bootstrap();
    await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'vendor API down' });
    // Three hourly occurrences fall in the pause.
    t.t.clock.set(Date.parse('2026-06-01T11:30:00Z'));
    expect(await worker.tick()).toMatchObject({ due: 0 });
    await t.request('POST', `${BASE}/job/resume`, t.tokens.write);
    expect(await summary(t)).toMatchObject({ nextRunAt: '2026-06-01T12:00:00Z' });
    t.t.clock.set(Date.parse('2026-06-01T12:00:00Z'));
    expect(await worker.tick()).toEqual({ due: 1, claimed: 1, coalesced: 0, fired: 1, skipped: 0 });
    await worker.executor.settled();
    const runs = await t.t.store.db
      .selectFrom('runs')
      .select(['scheduled_for', 'coalesced', 'outcome'])
      .execute();
    expect(runs.map((r) => [Number(r.scheduled_for), Number(r.coalesced), r.outcome])).toEqual([
      [Date.parse('2026-06-01T12:00:00Z'), 0, 'completed'],
    ]);
    await worker.stop();
  });

  it('refuses a bad note with its field and what is allowed, and changes nothing', async () => {
    const t = await app();
    const twoLines = await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'a\nb' });
    expect(twoLines.statusCode).toBe(400);
    expect(twoLines.json()).toMatchObject({
      code: 'ARGUMENT_INVALID',
      detail: 'note: has a line break or another control character; one line of text is allowed',
    });
    const long = await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { note: 'x'.repeat(501) });
    expect(long.statusCode).toBe(400);
    expect(long.json().code).toBe('VALIDATION_FAILED');
    const unknown = await t.request('POST', `${BASE}/job/pause`, t.tokens.write, { reason: 'x' });
    expect(unknown.statusCode).toBe(400);
    expect((await document(t))?.version).toBe(1);
    expect(await summary(t)).toMatchObject({ enabled: true, paused: null });
  });

  it('needs the write role, and answers 404 for a scheduler that does not exist or another tenant', async () => {
    const t = await app();
    expect((await t.request('POST', `${BASE}/job/pause`, t.tokens.read, {})).statusCode).toBe(403);
    expect((await t.request('POST', `${BASE}/nope/pause`, t.tokens.write, {})).statusCode).toBe(404);
    expect(
      (await t.request('POST', '/brain/other/project/ops/scheduler/job/pause', t.tokens.write, {}))
        .statusCode,
    ).toBe(404);
    expect((await document(t))?.version).toBe(1);
  });

  it('pauses a _tenant scheduler in every project from _tenant, and says how to pause it in one project only', async () => {
    a = await testApp(dialect);
    const t = a;
    expect((await t.request('PUT', `${TENANT_BASE}/job`, t.tokens.admin, { yaml: YAML })).statusCode).toBe(
      201,
    );
    const inProject = await t.request('POST', `${BASE}/job/pause`, t.tokens.admin, { note: 'x' });
    expect(inProject.statusCode).toBe(409);
    expect(inProject.json()).toMatchObject({
      code: 'SCHEDULER_INHERITED',
      detail:
        'scheduler "job" comes from _tenant: pause or resume it there to do so in every project of acme, or write a scheduler "job" in ops (an override of it) to do so in ops only',
    });
    const paused = await t.request('POST', `${TENANT_BASE}/job/pause`, t.tokens.admin, {
      note: 'quiet week',
    });
    expect(paused.statusCode).toBe(200);
    expect(await summary(t)).toMatchObject({
      source: 'tenant',
      enabled: false,
      paused: { note: 'quiet week', by: 'ada' },
    });
    expect((await t.request('POST', `${BASE}/job/fire`, t.tokens.write)).statusCode).toBe(409);
  });
});
