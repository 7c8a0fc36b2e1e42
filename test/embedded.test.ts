import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUrsa, type ProcessContext } from '../src/index.js';
import { fixedClock } from '../src/time/clock.js';
import { projectFolder } from './support/project.js';
import { until } from './support/until.js';

// issue #5: the library API, with an engine that is an async function of the process and a signal.
describe('createUrsa (library API)', () => {
  it('runs an application engine on schedule and records the run like any other', async () => {
    const clock = fixedClock(Date.parse('2026-06-01T08:00:00Z'));
    const seen: ProcessContext[] = [];
    const ursa = await createUrsa({
      db: join(mkdtempSync(join(tmpdir(), 'ursa-lib-')), 'app.db'),
      clock,
      logger: 'silent',
      tenant: 'acme',
      project: 'app',
      engines: {
        greet: async (process) => {
          seen.push(process);
          process.report('paused');
          process.report('running');
          return { output: `hello ${String(process.params.name)}` };
        },
        broken: async () => {
          throw new Error('no greeting today');
        },
      },
    });
    const entries = await ursa.apply(
      projectFolder({
        '_vance/recipes/greet.yaml': 'description: d\nengine: greet\nparams:\n  name: world\n',
        '_vance/recipes/broken.yaml': 'description: d\nengine: broken\n',
        '_vance/scheduler/hello.yaml':
          'description: d\ncron: "0 * * * * *"\nrecipe: greet\nparams:\n  name: team\n',
        '_vance/scheduler/oops.yaml': 'description: d\ncron: "0 * * * * *"\nrecipe: broken\n',
      }),
      { as: 'alice' },
    );
    expect(entries.map((e) => e.status)).toEqual(['created', 'created', 'created', 'created']);
    const fired = await ursa.fire('hello');
    await ursa.start();
    // The END line and the final run log follow the run's end: wait for the log to say so.
    const logOf = async (path: string) =>
      (await ursa.repos.documents.get({ tenant: 'acme', project: 'app', path }))?.body ?? '';
    await until(
      async () => (await logOf(fired.logPath)).includes('outcome: completed'),
      'the fired run ends',
    );
    const run = await ursa.repos.runs.get(fired.correlationId);
    expect(run).toMatchObject({ trigger: 'manual', outcome: 'completed', runAs: 'alice' });
    expect(seen[0]).toMatchObject({
      scheduler: 'hello',
      params: { name: 'team' },
      tenant: 'acme',
      project: 'app',
      correlationId: fired.correlationId,
      // Issue #20: the attempt's fencing token, as every engine gets it.
      fencingToken: run?.fencingToken,
      attempt: 1,
    });
    expect(run?.fencingToken).toEqual(expect.any(Number));
    const log = await ursa.repos.documents.get({ tenant: 'acme', project: 'app', path: fired.logPath });
    expect(log?.body).toContain('hello team');

    const failed = await ursa.fire('oops');
    await until(
      async () => (await logOf(failed.logPath)).includes('outcome: failed'),
      'the failing run ends',
    );
    expect(await ursa.repos.runs.get(failed.correlationId)).toMatchObject({
      outcome: 'failed',
      reason: 'no greeting today',
    });
    await ursa.stop();
  });

  it('runs the README example in examples/embedded', () => {
    const script = resolve(import.meta.dirname, '../examples/embedded/embed.mjs');
    const out = execFileSync(process.execPath, [script], {
      encoding: 'utf8',
      env: { ...process.env, EMBED_SECONDS: '1' },
    });
    expect(out).toContain('created _vance/scheduler/greeting.yaml');
    // The manual fire's greeting is there whatever the cron ticks did in that second.
    const fired = /fired greeting: (run_[0-9a-f-]+)/.exec(out)?.[1];
    expect(fired).toBeDefined();
    expect(out).toContain(`hello, team (run ${fired},`);
  });
});
