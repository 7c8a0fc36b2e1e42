import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fetch, HttpClient } from '../../src/client/http.js';
import { LocalClient } from '../../src/client/local.js';
import { defaultEngines } from '../../src/engines/index.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { claimRun, type Run } from '../../src/runs/index.js';
import type { Runtime } from '../../src/runtime/context.js';
import { type FeedLine, openStore, repositories, type Store } from '../../src/store/index.js';
import { fixedClock } from '../../src/time/clock.js';
import { type CliRun, injectFetch, ursa as runUrsa } from '../support/cli.js';

const NOW = '2026-03-28T12:00:00Z';

/** `ursa <args>` in-process at {@link NOW}, as `test/support/cli.ts` runs it. */
function ursa(
  args: string[],
  options: { cwd: string; fetch?: Fetch; env?: Record<string, string> },
): Promise<CliRun> {
  return runUrsa(args, { ...options, now: NOW });
}

/** A `fetch` that records what it was asked and answers `status` with `body` as `contentType`. */
function fakeFetch(status: number, body: string, contentType = 'application/problem+json') {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch: Fetch = async (url, init) => {
    calls.push({ url, init });
    return new Response(body, { status, headers: { 'content-type': contentType } });
  };
  return { fetch, calls };
}

const feedLine = (
  kind: FeedLine['kind'],
  trace: string,
  at: string,
  outcome: string,
  payload: Record<string, unknown>,
): Omit<FeedLine, 'id'> => ({
  tenant: 'default',
  project: 'demo',
  at: Date.parse(at),
  kind,
  refType: 'SCHEDULER',
  refId: 'hb',
  traceId: trace,
  outcome,
  logPath: `_vance/logs/scheduler/hb/${trace}.md`,
  payload: { trigger: 'cron', coalesced: false, coalescedUntil: null, ...payload },
});

// issue #7 item 7: every scheduling command prints the same on a store and against a server.
describe('the CLI against a server (--url) and on a store print the same', () => {
  let cwd: string;
  let store: Store;
  let app: FastifyInstance;
  let remote: (args: string[]) => Promise<CliRun>;
  let client: HttpClient;
  let rt: Runtime;
  let local: (args: string[]) => Promise<CliRun>;

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'ursa-remote-'));
    writeFileSync(join(cwd, 'hb.yaml'), 'description: heartbeat\ncron: "0 */5 * * * *"\nrecipe: noop\n');
    writeFileSync(join(cwd, 'bad.yaml'), 'description: bad\ncron: "61 * * * * *"\nrecipe: noop\nextra: 1\n');
    // The server's runtime on the store the local commands use (./data/ursa.db), at the same instant.
    store = await openStore(join(cwd, 'data', 'ursa.db'));
    rt = {
      repos: repositories(store),
      clock: fixedClock(Date.parse(NOW)),
      settings: { misfireThresholdMs: 60_000, runLogRetentionDays: 7, shutdownGraceMs: 1_000 },
      engines: defaultEngines(),
      log: createLogger('silent'),
    };
    const { secret } = await rt.repos.tokens.create({ tenant: 'default', role: 'admin', user: 'admin' }, 1);
    app = await buildApp({ rt });
    await app.ready();
    const fetch = injectFetch(app);
    client = new HttpClient({
      baseUrl: 'http://ursa.test',
      token: secret,
      scope: { tenant: 'default', project: 'demo' },
      fetch,
    });
    remote = (args) => ursa([...args, '--url', 'http://ursa.test', '--token', secret], { cwd, fetch });
    local = (args) => ursa(args, { cwd });
  });

  afterAll(async () => {
    await app.close();
    await store.close();
  });

  it('set, list, get, fire, refresh and doc', async () => {
    const setRemote = await remote(['set', 'hb', '-f', 'hb.yaml']);
    expect(setRemote).toEqual({
      code: 0,
      stdout: 'created _vance/scheduler/hb.yaml (version 1)\ntimezone: UTC (your display zone)\n',
      stderr: '',
    });
    const setLocal = await local(['set', 'hb2', '-f', 'hb.yaml']);
    expect(setLocal.stdout).toBe(setRemote.stdout.replace('hb.yaml', 'hb2.yaml'));
    expect((await remote(['set', 'hb', '-f', 'hb.yaml'])).stdout).toContain(
      'updated _vance/scheduler/hb.yaml (version 1)',
    );

    for (const args of [
      ['list'],
      ['list', '--json'],
      ['get', 'hb'],
      ['get', 'hb', '--json'],
      ['refresh'],
      ['refresh', '--name', 'hb'],
      ['refresh', '--all-projects'],
      ['doc', 'ls'],
      ['doc', 'ls', '_vance/scheduler/', '--json'],
      ['doc', 'cat', '_vance/scheduler/hb.yaml'],
      ['runs', 'hb'],
      ['list', '--project', 'empty'],
    ]) {
      const [l, r] = [await local(args), await remote(args)];
      expect({ args, ...r }).toEqual({ args, ...l });
      expect(l.code).toBe(0);
    }
    expect((await local(['list'])).stdout).toBe(
      [
        'NAME  SCHEDULE            TIMEZONE  ENABLED  NEXT RUN              LAST RUN',
        'hb    cron 0 */5 * * * *  UTC       yes      2026-03-28T12:05:00Z  -',
        'hb2   cron 0 */5 * * * *  UTC       yes      2026-03-28T12:05:00Z  -',
        '',
      ].join('\n'),
    );

    // A fire's ids differ; its lines do not. Without a running worker both say so.
    const fired = [await local(['fire', 'hb']), await remote(['fire', 'hb'])].map((run) => ({
      ...run,
      stdout: run.stdout.replace(/run_[0-9a-f-]+/g, 'run_ID').replace(/\d{8}T\d{6}Z/, 'WHEN'),
    }));
    expect(fired[1]).toEqual(fired[0]);
    expect(fired[0]?.stdout).toBe(
      'fired hb: run_ID is requested; no worker has taken it yet\nrun log: _vance/logs/scheduler/hb/WHEN-run_ID.md\n' +
        'no worker is running: the run starts when one does (ursa serve or ursa worker)\n',
    );
    expect(JSON.parse((await remote(['fire', 'hb', '--json'])).stdout)).toEqual({
      correlationId: expect.stringMatching(/^run_/),
      logPath: expect.stringMatching(/^_vance\/logs\/scheduler\/hb\//),
      state: 'queued',
      outcome: 'pending',
      waitingBehind: null,
      foldedInto: null,
    });

    expect((await remote(['delete', 'hb2'])).stdout).toMatch(
      /^deleted hb2; restore with: ursa doc restore _vance\/trash\/.+_hb2\.yaml\n$/,
    );
  });

  it('runs, events and the inbox, pages and cursors included', async () => {
    const { feed, inbox, runs } = repositories(store);
    const run = (correlationId: string, scheduledFor: number, fields: Record<string, unknown>) =>
      runs.insert({
        ...claimRun({
          correlationId,
          tenant: 'default',
          project: 'demo',
          name: 'hb',
          scheduledFor,
          trigger: 'cron',
          coalescedUntil: null,
          claimedAt: scheduledFor,
          runAs: 'admin',
          logPath: `_vance/logs/scheduler/hb/${correlationId}.md`,
          workerId: null,
          lockMode: 'full',
        }),
        ...fields,
      } as Run);
    await run('run_1', 1000, {
      state: 'ended',
      outcome: 'completed',
      startedAt: 1000,
      endedAt: 2000,
      attempt: 1,
    });
    await run('run_2', 3000, {
      state: 'skipped',
      outcome: 'skipped_overlap',
      reason: 'overlap',
      endedAt: 3000,
    });
    await feed.append(feedLine('START', 'run_1', '2026-03-28T10:00:00Z', 'pending', { scheduledFor: 1 }));
    await feed.append(
      feedLine('END', 'run_1', '2026-03-28T10:00:01Z', 'completed', { scheduledFor: 1, durationMs: 1000 }),
    );
    await feed.append(
      feedLine('SKIPPED', 'run_2', '2026-03-28T10:05:00Z', 'skipped_overlap', { scheduledFor: 2 }),
    );
    for (const title of ['one', 'two', 'three'])
      await inbox.add({
        tenant: 'default',
        user: 'admin',
        kind: 'run-failed',
        title,
        body: 'exit 1',
        createdAt: 5,
      });

    for (const args of [
      ['runs', 'hb'],
      ['runs', 'hb', '--json', '-n', '1'],
      ['runs', 'hb', '-n', '1', '--before', '3000'],
      ['events', 'hb'],
      ['events', 'hb', '--json', '-n', '2'],
      ['events'],
      ['events', '-n', '1'],
      ['events', '--kind', 'END,SKIPPED', '--json'],
      ['events', 'hb', '--run', 'run_1'],
      ['events', '--since', '2026-03-28T10:00:01Z', '--until', '2026-03-28T10:05:00Z'],
      ['events', 'nobody', '--kind', 'START'],
      ['inbox'],
      ['inbox', '-n', '2', '--json'],
      ['inbox', '--user', 'admin', '--before', '2'],
      ['inbox', '--user', 'nobody'],
    ]) {
      const [l, r] = [await local(args), await remote(args)];
      expect({ args, ...r }).toEqual({ args, ...l });
      expect(l.code).toBe(0);
    }
    // The project's feed names each line's scheduler (issue #23).
    expect((await local(['events'])).stdout).toMatch(
      /^AT {20}KIND {5}SCHEDULER {2}OUTCOME {10}RUN {4}RUN LOG\n2026-03-28T10:05:00Z {2}SKIPPED {2}hb {9}skipped_overlap {2}run_2 {2}_vance\/logs\/scheduler\/hb\/run_2\.md\n/,
    );
    expect((await remote(['events', '--since', 'soon'])).stderr).toBe(
      'ursa: since: "soon" is not an instant [INSTANT_INVALID]\n' +
        '  allowed: an ISO-8601 date-time with Z or an offset, e.g. 2026-05-14T06:00:00Z\n',
    );
    // One item each way; both then show the last one.
    expect((await remote(['inbox', 'read', '1', '--user', 'admin'])).stdout).toBe('marked read: 1\n');
    expect((await local(['inbox', 'read', '2'])).stdout).toBe('marked read: 1\n');
    expect((await remote(['inbox', 'read', '2', '3'])).stdout).toBe(
      "marked read: 1 of 2 (the others are read already or not items of the token's user in default)\n",
    );
    expect((await local(['inbox', '--all', '--json'])).stdout).toBe(
      (await remote(['inbox', '--all', '--json'])).stdout,
    );
    expect((await remote(['inbox'])).stdout).toBe("no unread items for the token's user in default\n");
  });

  it('recipe set, list, get and delete (issue #23)', async () => {
    writeFileSync(join(cwd, 'backup.yaml'), 'description: Back up\nengine: shell\ncommand: [/bin/true]\n');
    writeFileSync(join(cwd, 'broken.yaml'), 'description: Back up\nengine: shell\n');
    expect(await remote(['recipe', 'set', 'backup', '-f', 'backup.yaml'])).toEqual({
      code: 0,
      stdout: 'created _vance/recipes/backup.yaml (version 1)\n',
      stderr: '',
    });
    expect((await local(['recipe', 'set', 'backup2', '-f', 'backup.yaml'])).stdout).toBe(
      'created _vance/recipes/backup2.yaml (version 1)\n',
    );
    for (const args of [
      ['recipe', 'list'],
      ['recipe', 'list', '--json'],
      ['recipe', 'get', 'backup'],
      ['recipe', 'get', 'backup', '--json'],
      ['recipe', 'get', 'noop'],
    ]) {
      const [l, r] = [await local(args), await remote(args)];
      expect({ args, ...r }).toEqual({ args, ...l });
      expect(l.code).toBe(0);
    }
    expect((await local(['recipe', 'list'])).stdout).toBe(
      [
        'NAME     ENGINE  SOURCE   DESCRIPTION',
        'backup   shell   project  Back up',
        'backup2  shell   project  Back up',
        'noop     noop    builtin  Does nothing; for tests and benchmarks.',
        '',
      ].join('\n'),
    );
    expect(await remote(['recipe', 'get', 'noop'])).toEqual({
      code: 0,
      stdout: 'description: Does nothing; for tests and benchmarks.\nengine: noop\n',
      stderr: '(built in)\n',
    });
    const [l, r] = [
      await local(['recipe', 'set', 'backup', '-f', 'broken.yaml']),
      await remote(['recipe', 'set', 'backup', '-f', 'broken.yaml']),
    ];
    expect(r).toEqual(l);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('command');
    expect((await remote(['recipe', 'delete', 'backup'])).stdout).toMatch(
      /^deleted recipe backup; restore with: ursa doc restore _vance\/trash\/.+_backup\.yaml\n$/,
    );
    expect((await local(['recipe', 'delete', 'backup2'])).stdout).toMatch(/^deleted recipe backup2;/);
    expect((await remote(['recipe', 'get', 'backup'])).stderr).toBe('ursa: no such resource [NOT_FOUND]\n');
    expect((await local(['recipe', 'list', '--json'])).stdout).toBe(
      (await remote(['recipe', 'list', '--json'])).stdout,
    );
  });

  it('workflow set, list, get, run, status and stop against a server print as on a store (issue #23)', async () => {
    writeFileSync(join(cwd, 'flow.yaml'), 'description: w\nsteps:\n  - name: one\n    recipe: noop\n');
    expect(await remote(['workflow', 'set', 'flow', 'flow.yaml'])).toEqual({
      code: 0,
      stdout: 'created _vance/workflows/flow.yaml (v1)\n',
      stderr: '',
    });
    for (const args of [
      ['workflow', 'list'],
      ['workflow', 'list', '--json'],
      ['workflow', 'get', 'flow'],
      ['workflow', 'get', 'flow', '--json'],
    ]) {
      const [l, r] = [await local(args), await remote(args)];
      expect({ args, ...r }).toEqual({ args, ...l });
      expect(l.code).toBe(0);
    }
    // The run runs on the server; the command follows it to its end.
    const ran = await remote(['workflow', 'run', 'flow']);
    const id = /^started workflow run ([0-9a-f]{8})\n/.exec(ran.stdout)?.[1] as string;
    expect([ran.code, ran.stderr]).toEqual([0, '']);
    expect(ran.stdout).toBe(
      `started workflow run ${id}\nworkflow run ${id} (flow): completed\n  one (noop): completed\n`,
    );
    for (const args of [
      ['workflow', 'status', id],
      ['workflow', 'status', id, '--json'],
    ]) {
      const [l, r] = [await local(args), await remote(args)];
      expect({ args, ...r }).toEqual({ args, ...l });
    }
    expect((await remote(['workflow', 'stop', id])).stdout).toBe(`${id} has ended: nothing to stop\n`);
    const detached = await remote(['workflow', 'run', 'flow', '--detach']);
    expect(detached.stdout).toMatch(/^started workflow run [0-9a-f]{8}\n$/);
    expect((await local(['workflow', 'run', 'flow', '--detach'])).stderr).toBe(
      'ursa: detach: --detach needs --url: a run on a store runs here [ARGUMENT_INVALID]\n  allowed: --detach with --url <server>\n',
    );
    expect((await remote(['workflow', 'run', 'flow', '--as', 'bob'])).stderr).toContain('[ARGUMENT_INVALID]');
    const [l, r] = [
      await local(['workflow', 'get', 'nothing']),
      await remote(['workflow', 'get', 'nothing']),
    ];
    expect(r).toEqual(l);
    expect(r.stderr).toMatch(/^ursa: no workflow "nothing" in default\/demo.*\[NOT_FOUND\]\n$/);
  });

  it('deletes a workflow through either client: to the trash, then NOT_FOUND (issue #23)', async () => {
    const local = new LocalClient(rt, { tenant: 'default', project: 'demo' });
    const yaml = 'description: w\nsteps:\n  - name: one\n    recipe: noop\n';
    for (const [name, through] of [
      ['w1', client],
      ['w2', local],
    ] as const) {
      await repositories(store).documents.put(
        { tenant: 'default', project: 'demo', path: `_vance/workflows/${name}.yaml` },
        yaml,
        { user: 'admin', tokenId: null, interface: 'cli', agent: false },
        Date.parse(NOW),
      );
      expect((await through.deleteWorkflow(name)).trashPath).toMatch(
        new RegExp(`^_vance/trash/.+_${name}\\.yaml$`),
      );
      await expect(through.deleteWorkflow(name)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('prints the same error line and exits 2 for what the service refuses', async () => {
    for (const args of [
      ['set', 'bad', '-f', 'bad.yaml'],
      ['set', '../x', '-f', 'hb.yaml'],
      ['runs', 'hb', '-n', '0'],
      ['inbox', 'read', 'x'],
    ]) {
      const [l, r] = [await local(args), await remote(args)];
      expect({ args, ...r }).toEqual({ args, ...l });
      expect(l.code).toBe(2);
    }
    // A missing resource: the same code and exit, a server never names what it does not show (decisions §6).
    const [l, r] = [await local(['get', 'nope']), await remote(['get', 'nope'])];
    expect([l.code, l.stderr]).toEqual([
      2,
      'ursa: scheduler "nope" does not exist in default/demo [NOT_FOUND]\n',
    ]);
    expect([r.code, r.stderr]).toEqual([2, 'ursa: no such resource [NOT_FOUND]\n']);
    expect((await remote(['process', 'stop', 'proc_nope'])).stderr).toBe(
      'ursa: no such resource [NOT_FOUND]\n',
    );
  });

  it('acts as its token: a token of another tenant sees nothing, --as is refused', async () => {
    const { secret } = await repositories(store).tokens.create(
      { tenant: 'other', role: 'admin', user: 'olga' },
      1,
    );
    const run = await ursa(['list', '--url', 'http://ursa.test', '--token', secret], {
      cwd,
      fetch: injectFetch(app),
    });
    expect(run).toEqual({ code: 2, stdout: '', stderr: 'ursa: no such resource [NOT_FOUND]\n' });
    const wrong = await ursa(['list', '--url', 'http://ursa.test', '--token', 'ursa_wrong'], {
      cwd,
      fetch: injectFetch(app),
    });
    expect(wrong).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ursa: the bearer token is unknown or revoked [UNAUTHENTICATED]\n',
    });
    const as = await remote(['set', 'hb', '-f', 'hb.yaml', '--as', 'bob']);
    expect([as.code, as.stderr.split('\n')[0]]).toEqual([
      2,
      'ursa: as: --as names the user of a local store; against a server the token says who acts [ARGUMENT_INVALID]',
    ]);
  });
});

describe('HttpClient error mapping', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'ursa-remote-'));
  const args = [
    '--url',
    'http://ursa.test:9000/base',
    '--token',
    'ursa_secret',
    '--tenant',
    'acme',
    '--project',
    'ops',
  ];

  it('turns a problem+json back into the error line a local run prints, with exit code 2', async () => {
    const local = await ursa(['get', 'x', '--db', 'x.db'], { cwd });
    expect(local).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ursa: scheduler "x" does not exist in default/demo [NOT_FOUND]\n',
    });
    const problem = {
      type: 'https://ursa.dev/errors#not_found',
      title: 'NOT_FOUND',
      status: 404,
      code: 'NOT_FOUND',
      detail: 'scheduler "x" does not exist in default/demo',
    };
    const { fetch, calls } = fakeFetch(404, JSON.stringify(problem));
    expect(await ursa(['get', 'x', ...args], { cwd, fetch })).toEqual(local);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe('http://ursa.test:9000/base/brain/acme/project/ops/scheduler/x');
    expect(calls[0]?.init.method).toBe('GET');
    expect((calls[0]?.init.headers as Record<string, string> | undefined)?.authorization).toBe(
      'Bearer ursa_secret',
    );
  });

  it('keeps the field, the issues and an allowed member of the problem', async () => {
    const problem = {
      type: 'https://ursa.dev/errors#cron_invalid',
      title: 'CRON_INVALID',
      status: 400,
      code: 'CRON_INVALID',
      detail: 'day-of-week: "MON#6": the occurrence after # must be 1-5',
      errors: [{ path: 'day-of-week', message: 'day-of-week: "MON#6": the occurrence after # must be 1-5' }],
      allowed: 'n#k with n 0-7 or MON-SUN and k 1-5',
    };
    writeFileSync(join(cwd, 's.yaml'), 'description: x\ncron: "0 0 9 * * MON#6"\nrecipe: noop\n');
    const { fetch, calls } = fakeFetch(400, JSON.stringify(problem));
    const run = await ursa(['set', 's', '-f', 's.yaml', ...args], { cwd, fetch });
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ursa: day-of-week: "MON#6": the occurrence after # must be 1-5 [CRON_INVALID]\n' +
        '  allowed: n#k with n 0-7 or MON-SUN and k 1-5\n',
    });
    expect(calls[0]?.init.method).toBe('PUT');
    expect(JSON.parse(calls[0]?.init.body as string)).toEqual({
      yaml: 'description: x\ncron: "0 0 9 * * MON#6"\nrecipe: noop\n',
    });
  });

  it('names the server for answers that are not problems, and for one it cannot reach', async () => {
    const html = fakeFetch(502, '<html>bad gateway</html>', 'text/html');
    expect(await ursa(['list', ...args], { cwd, fetch: html.fetch })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ursa: the server at http://ursa.test:9000/base answered HTTP 502 [STORE_UNAVAILABLE]\n',
    });
    const notJson = fakeFetch(200, '<html>hello</html>', 'text/html');
    expect((await ursa(['list', ...args], { cwd, fetch: notJson.fetch })).stderr).toBe(
      'ursa: the server at http://ursa.test:9000/base did not answer GET /brain/acme/project/ops/scheduler with JSON: is it an Ursa server? [STORE_UNAVAILABLE]\n',
    );
    const refused: Fetch = async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
      });
    };
    expect(await ursa(['runs', 'hb', ...args], { cwd, fetch: refused })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ursa: cannot reach the Ursa server at http://ursa.test:9000/base: connection refused [STORE_UNAVAILABLE]\n',
    });
  });

  it('takes URSA_URL and URSA_TOKEN, and refuses a missing token, a bad URL and --url with --db', async () => {
    const { fetch, calls } = fakeFetch(
      200,
      JSON.stringify({ schedulers: [], invalid: [] }),
      'application/json',
    );
    const env = {
      URSA_URL: 'http://env.test',
      URSA_TOKEN: 'ursa_env',
      URSA_TENANT: 't1',
      URSA_PROJECT: 'p1',
    };
    expect(await ursa(['list'], { cwd, fetch, env })).toEqual({
      code: 0,
      stdout: 'no schedulers in t1/p1\n',
      stderr: '',
    });
    expect(calls[0]?.url).toBe('http://env.test/brain/t1/project/p1/scheduler?all=true');
    expect((calls[0]?.init.headers as Record<string, string> | undefined)?.authorization).toBe(
      'Bearer ursa_env',
    );

    expect(await ursa(['list', '--url', 'http://x.test'], { cwd, fetch })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ursa: a token is required to work against http://x.test: pass --token <token> or set URSA_TOKEN [UNAUTHENTICATED]\n',
    });
    expect((await ursa(['list', '--url', 'ftp://x.test', '--token', 't'], { cwd, fetch })).stderr).toBe(
      'ursa: url: "ftp://x.test" is not the URL of an Ursa server [ARGUMENT_INVALID]\n' +
        '  allowed: an http:// or https:// URL such as http://127.0.0.1:8080\n',
    );
    const both = await ursa(['list', '--url', 'http://x.test', '--token', 't', '--db', 'x.db'], {
      cwd,
      fetch,
    });
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([
      2,
      'ursa: url: --url and --db exclude each other: a command works on one [ARGUMENT_INVALID]',
    ]);
    expect(calls).toHaveLength(1);
  });
});
