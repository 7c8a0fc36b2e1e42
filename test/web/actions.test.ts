import { resolve } from 'node:path';
import type { BrowserContext, Dialog, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { timeZone } from '../../src/cron/index.js';
import { formatZoned } from '../../src/time/instant.js';
import { launch } from './browser.js';
import { apply, call, countOf, focused, goHash, runOf, shotsFolder, signIn, textOf, WAIT } from './page.js';
import { type Served, serve } from './server.js';

// issue #23 item 3, "The editor acts": each action on the page in Debian's Chromium against a
// real `ursa serve`, as a person (or a keyboard) uses it.

const P = '/brain/acme/project/ops';
const HASH = '#/p/acme/ops';
const SLEEPY =
  'description: Sleeps a minute\nengine: shell\ncommand: ["sh", "-c", "echo started; sleep 60"]\n';
const SLEEPER =
  'description: A long run to stop\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: sleepy\noverlap: skip\n';

let served: Served | undefined;
let context: BrowserContext | undefined;
let page: Page;
const shots = shotsFolder();

/** The browser, then one server for the file (a missing Chromium fails the test, never skips it). */
async function start(): Promise<Served> {
  if (served !== undefined) return served;
  context = await launch({ timezoneId: 'Europe/Berlin' });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  served = await serve();
  await apply(served, 'acme', 'ops', { '_vance/recipes/sleepy.yaml': SLEEPY });
  expect((await call(served, 'PUT', `${P}/scheduler/sleeper`, SLEEPER)).status).toBe(201);
  await signIn(page, served, `${HASH}/s/sleeper`);
  return served;
}

/** A wait for the server's worker (a process starting or stopping). */
const SLOW = { ...WAIT, timeout: 30_000 };
const run = (id: string) => runOf(served as Served, 'acme', 'ops', id);
/** Fires sleeper over REST; its correlationId. */
const fire = async (s: Served) =>
  ((await (await call(s, 'POST', `${P}/scheduler/sleeper/fire`)).json()) as { correlationId: string })
    .correlationId;

const shot = (name: string) => page.screenshot({ path: resolve(shots, name), fullPage: true });

afterAll(async () => {
  await context?.close();
  await served?.stop();
});

describe('the editor acts (issue #23)', () => {
  it('fires only after a confirmation that names the overlap policy, then links to the run; Stop asks, then cancels the running run', {
    timeout: 120_000,
  }, async () => {
    await start();
    await page.getByRole('heading', { name: 'sleeper', level: 1 }).waitFor();
    const fireButton = page.getByRole('button', { name: 'Fire now…' });
    // Escape closes the dialog, fires nothing and gives the focus back to the button.
    await fireButton.click();
    const dialog = page.getByRole('dialog', { name: 'Fire sleeper now?' });
    await textOf(dialog).toContain('through its overlap policy (skip): if a run is active, it is skipped.');
    await shot('fire-confirm.png');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page)).toBe('Fire now…');
    const runs = (await (await call(served as Served, 'GET', `${P}/scheduler/sleeper/runs`)).json()) as {
      runs: unknown[];
    };
    expect(runs.runs).toEqual([]);

    await fireButton.click();
    await dialog.getByRole('button', { name: 'Fire' }).click();
    await textOf(page.getByRole('status').first()).toMatch(
      /^Fired sleeper: run_[0-9a-f-]{36} started \(process proc_\S+\)\. Open the run$/,
    );
    expect(await focused(page)).toBe('Fire now…');
    const correlationId = /run_[0-9a-f-]{36}/.exec(
      (await page.getByRole('status').first().textContent()) ?? '',
    )?.[0] as string;

    // The run page follows the run while it is open: it starts, its output shows, and Stop appears.
    await page.getByRole('link', { name: 'Open the run' }).click();
    await page.getByRole('heading', { name: `Run ${correlationId}` }).waitFor();
    await page.locator('[data-outcome="pending"]').waitFor();
    await textOf(page.locator('dl.facts')).toContain('running');
    await shot('run-stop.png');
    await page.getByRole('button', { name: 'Stop…' }).click();
    const stopDialog = page.getByRole('dialog', { name: 'Stop this run?' });
    await textOf(stopDialog).toContain(`run ${correlationId} ends cancelled`);
    await stopDialog.getByRole('button', { name: 'Stop run' }).click();
    await textOf(page.locator('.stop [role="status"]')).toBe(`Stopping ${correlationId}: it ends cancelled.`);
    await page.locator('[data-outcome="cancelled"]').waitFor({ timeout: 30_000 });
    await textOf(page.locator('.run-log')).toContain('TERMINATED outcome=cancelled');
    await countOf(page.getByRole('button', { name: 'Stop…' })).toBe(0);
    const stopped = await run(correlationId);
    expect(stopped.outcome).toBe('cancelled');
    expect(stopped.log).toContain('stopped from the web editor');
  });

  it("stops the scheduler's active run from its editor, after a confirmation", {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    const fired = await fire(s);
    // Started on the server's worker: its process exists.
    await expect.poll(async () => (await run(fired)).processId, SLOW).not.toBeNull();
    await page.goto(`${s.url}/${HASH}/s/sleeper`);
    const active = page.locator('.active-run');
    await textOf(active).toContain(`${fired} is running.`);
    await active.getByRole('button', { name: 'Stop…' }).click();
    await page
      .getByRole('dialog', { name: 'Stop this run?' })
      .getByRole('button', { name: 'Stop run' })
      .click();
    await expect.poll(async () => (await run(fired)).outcome, SLOW).toBe('cancelled');
  });

  it('polls a running run every 2 s while its page is open, and stops when it ends or the page is left', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    // The fake clock is the browser context's: a browser of its own, so no other page gets it.
    const own = await launch({ timezoneId: 'Europe/Berlin' });
    const clocked = await own.newPage();
    await clocked.clock.install();
    await signIn(clocked, s, HASH);
    const asked: string[] = [];
    clocked.on('request', (request) => {
      if (/\/runs\/run_/.test(request.url())) asked.push(request.url());
    });
    const fired = await fire(s);
    await clocked.goto(`${s.url}/${HASH}/s/sleeper/run/${fired}`);
    await clocked.getByRole('heading', { name: `Run ${fired}` }).waitFor();
    await textOf(clocked.locator('dl.facts')).toContain('running');
    await clocked.clock.pauseAt(Date.now() + 500);
    const first = asked.length;
    await clocked.clock.runFor(6_000);
    await expect.poll(() => asked.length, WAIT).toBe(first + 3);
    // Leaving the page ends the polling.
    await goHash(clocked, HASH);
    await clocked.getByRole('heading', { name: 'Schedulers of acme/ops' }).waitFor();
    const left = asked.length;
    await clocked.clock.runFor(10_000);
    expect(asked.length).toBe(left);
    // An ended run is asked for once.
    const { processId } = await run(fired);
    await call(s, 'POST', `${P}/processes/${processId}/stop`, { reason: 'test' });
    await expect.poll(async () => (await run(fired)).outcome, SLOW).toBe('cancelled');
    await goHash(clocked, `${HASH}/s/sleeper/run/${fired}`);
    // The page's effects wait for an animation frame: the paused clock moves on a little at a time.
    await expect
      .poll(async () => {
        await clocked.clock.runFor(50);
        return clocked.locator('[data-outcome="cancelled"]').count();
      }, WAIT)
      .toBe(1);
    const ended = asked.length;
    await clocked.clock.runFor(10_000);
    expect(asked.length).toBe(ended);
    await own.close();
  });

  it('asks before unsaved edits are lost: an in-app route change with a confirm, a reload with beforeunload', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    await page.goto(`${s.url}/${HASH}/s/sleeper`);
    await page.locator('.cm-line', { hasText: 'description:' }).click();
    await page.keyboard.press('End');
    await page.keyboard.type(' (edited)');
    await textOf(page.locator('.actions')).toContain('Unsaved changes');
    const asked: { type: string; message: string }[] = [];
    let answer = false;
    const onDialog = (dialog: Dialog) => {
      asked.push({ type: dialog.type(), message: dialog.message() });
      void (answer ? dialog.accept() : dialog.dismiss());
    };
    page.on('dialog', onDialog);
    // Declined: the editor stays, edits and address too.
    await page.getByRole('link', { name: 'Schedulers', exact: true }).click();
    await expect.poll(() => asked.length, WAIT).toBe(1);
    expect(asked[0]).toEqual({
      type: 'confirm',
      message: 'sleeper has unsaved changes. Leave and lose them?',
    });
    expect(new URL(page.url()).hash).toBe(`${HASH}/s/sleeper`);
    await textOf(page.locator('.cm-content')).toContain('A long run to stop (edited)');
    await page.getByRole('heading', { name: 'sleeper', level: 1 }).waitFor();
    // A reload asks the browser's own question.
    answer = true;
    await page.reload();
    await expect.poll(() => asked.map((a) => a.type), WAIT).toEqual(['confirm', 'beforeunload']);
    await page.getByRole('heading', { name: 'sleeper', level: 1 }).waitFor();
    // Nothing unsaved after the reload: leaving asks nothing.
    await page.getByRole('link', { name: 'Schedulers', exact: true }).click();
    await page.getByRole('heading', { name: 'Schedulers of acme/ops' }).waitFor();
    // Confirmed: the route changes.
    await goHash(page, `${HASH}/s/sleeper`);
    await page.locator('.cm-line', { hasText: 'description:' }).click();
    await page.keyboard.type('x');
    await page.getByRole('link', { name: 'Schedulers', exact: true }).click();
    await page.getByRole('heading', { name: 'Schedulers of acme/ops' }).waitFor();
    expect(asked.map((a) => a.type)).toEqual(['confirm', 'beforeunload', 'confirm']);
    page.off('dialog', onDialog);
  });

  it("lists a scheduler's versions (who, through which interface), diffs one against the current and restores it", {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    const first = 'description: Weekly report\ncron: "0 0 6 * * MON"\ntimezone: UTC\nrecipe: noop\n';
    const second = 'description: Weekly report, later\ncron: "0 0 9 * * MON"\ntimezone: UTC\nrecipe: noop\n';
    expect((await call(s, 'PUT', `${P}/scheduler/report`, first)).status).toBe(201);
    expect((await call(s, 'PUT', `${P}/scheduler/report`, second)).status).toBe(200);
    await goHash(page, `${HASH}/s/report`);
    await page.getByRole('heading', { name: 'report', level: 1 }).waitFor();
    const toggle = page.locator('button[aria-controls="versions-body"]');
    await textOf(toggle).toBe('Show history');
    await toggle.click();
    await textOf(toggle).toBe('Hide history');
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const rows = page.locator('table.history-table tbody tr');
    await countOf(rows).toBe(2);
    await textOf(rows.nth(0)).toMatch(/^2update\S*admin\s*rest\s*\d{4}-/);
    await textOf(rows.nth(0)).toContain('current');
    await textOf(rows.nth(1)).toMatch(/^1create\S*admin\s*rest/);

    await page.getByRole('button', { name: 'Compare version 1' }).click();
    const diff = page.locator('.diff-view');
    await textOf(diff.locator('h3')).toBe('Version 1 against the current version 2');
    await expect
      .poll(() => diff.locator('del').allTextContents(), WAIT)
      .toEqual(['− description: Weekly report\n', '− cron: "0 0 6 * * MON"\n']);
    await textOf(diff.locator('ins')).toContain('+ description: Weekly report, later');
    await countOf(diff.locator('pre > span')).toBe(2);
    await shot('history-diff.png');

    const restore = page.getByRole('button', { name: 'Restore version 1…' });
    await restore.click();
    const dialog = page.getByRole('dialog', { name: 'Restore version 1 of report?' });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page)).toBe('Restore version 1…');
    await restore.click();
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await textOf(page.getByRole('status').first()).toBe('Restored version 1 of report as version 3.');
    await textOf(page.locator('.cm-content')).toContain('description: Weekly report');
    await countOf(rows).toBe(3);
    await textOf(rows.nth(0)).toMatch(/^3update/);
    const now = (await (await call(s, 'GET', `${P}/scheduler/report`)).json()) as {
      yaml: string;
      version: number;
    };
    expect([now.version, now.yaml]).toEqual([3, first]);
  });

  it('pages the version history: the 50 newest entries, then older ones on request', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    for (let i = 1; i <= 52; i++) {
      const yaml = `description: Edit ${i}\ncron: "0 0 6 * * MON"\ntimezone: UTC\nrecipe: noop\n`;
      expect((await call(s, 'PUT', `${P}/scheduler/edited`, yaml)).status).toBe(i === 1 ? 201 : 200);
    }
    await goHash(page, `${HASH}/s/edited`);
    await page.getByRole('heading', { name: 'edited', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Show history' }).click();
    const rows = page.locator('table.history-table tbody tr');
    await countOf(rows).toBe(50);
    await page.getByRole('button', { name: 'Older entries' }).click();
    await countOf(rows).toBe(52);
    await expect.poll(() => rows.last().getAttribute('data-version'), WAIT).toBe('1');
    await countOf(page.getByRole('button', { name: 'Older entries' })).toBe(0);
  });

  it('lists the trash and restores a deleted scheduler from it', { timeout: 120_000 }, async () => {
    const s = await start();
    const yaml = 'description: Old cleanup\ncron: "0 0 1 * * *"\ntimezone: UTC\nrecipe: noop\n';
    expect((await call(s, 'PUT', `${P}/scheduler/cleanup`, yaml)).status).toBe(201);
    const { trashPath } = (await (await call(s, 'DELETE', `${P}/scheduler/cleanup`)).json()) as {
      trashPath: string;
    };
    await goHash(page, HASH);
    await page.getByRole('link', { name: 'Trash', exact: true }).click();
    await page.getByRole('heading', { name: 'Trash of acme/ops' }).waitFor();
    const row = page.locator('tr[data-trashed="cleanup.yaml"]');
    await textOf(row).toContain(trashPath);
    await shot('trash.png');
    await row.getByRole('button', { name: 'Restore cleanup.yaml…' }).click();
    await page
      .getByRole('dialog', { name: 'Restore cleanup.yaml?' })
      .getByRole('button', { name: 'Restore' })
      .click();
    await textOf(page.getByRole('status').first()).toBe(
      'Restored cleanup.yaml to _vance/scheduler/cleanup.yaml. Open cleanup',
    );
    await countOf(row).toBe(0);
    await page.getByRole('link', { name: 'Open cleanup' }).click();
    await page.getByRole('heading', { name: 'cleanup', level: 1 }).waitFor();
    await textOf(page.locator('.cm-content')).toContain('description: Old cleanup');
  });

  it('opens the recipe a scheduler runs, read-only, one click from its editor', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    await goHash(page, `${HASH}/s/sleeper`);
    await page.getByRole('heading', { name: 'sleeper', level: 1 }).waitFor();
    await page.locator('.recipe-link').getByRole('link', { name: 'sleepy' }).click();
    await page.getByRole('heading', { name: 'Recipe sleepy', level: 1 }).waitFor();
    const facts = page.locator('dl.facts');
    await textOf(facts).toContain('Engineshell');
    await textOf(facts).toContain('Commandsh -c echo started; sleep 60');
    await textOf(page.locator('pre.code')).toBe(SLEEPY);
    await textOf(page.locator('.recipe-view')).toContain('ops/_vance/recipes/sleepy.yaml');
    // The built-in noop has no document.
    await goHash(page, `${HASH}/recipe/noop`);
    await textOf(page.locator('.recipe-view')).toContain('The built-in recipe noop');
    expect(s.url).toContain('127.0.0.1');
  });

  it("shows every time in one zone, the browser's or UTC, named in the header; the choice outlives a reload", {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    const { runs } = (await (await call(s, 'GET', `${P}/scheduler/sleeper/runs`)).json()) as {
      runs: { correlationId: string; scheduledFor: string }[];
    };
    const newest = runs[0] as { correlationId: string; scheduledFor: string };
    const berlin = formatZoned(Date.parse(newest.scheduledFor), timeZone('Europe/Berlin')).slice(4);
    const utc = newest.scheduledFor.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    await goHash(page, HASH);
    const toggle = page.locator('button.zone-toggle');
    await textOf(toggle).toBe('Times in Europe/Berlin · show UTC');
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await textOf(page.locator('.timeline figcaption')).toContain('Next 24 hours of fires, in Europe/Berlin');
    await goHash(page, `${HASH}/s/sleeper/run/${newest.correlationId}`);
    await textOf(page.locator('dl.facts dd').nth(2)).toBe(berlin);
    expect(berlin).toMatch(/ \+0[12]:00$/);

    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await textOf(toggle).toBe('Times in UTC · show Europe/Berlin');
    await textOf(page.locator('dl.facts dd').nth(2)).toBe(utc);
    await page.reload();
    await textOf(page.locator('dl.facts dd').nth(2)).toBe(utc);
    await goHash(page, `${HASH}/s/sleeper`);
    await textOf(page.locator(`tr[data-run="${newest.correlationId}"] td`).nth(2)).toBe(utc);
    await textOf(page.locator('.cron-helper thead')).toContain('In UTC');
    await goHash(page, HASH);
    await textOf(page.locator('.timeline figcaption')).toContain('Next 24 hours of fires, in UTC');

    await page.getByRole('button', { name: 'Times in UTC · show Europe/Berlin' }).click();
    await textOf(page.locator('#zone-now')).toBe('Times in Europe/Berlin');
    expect(await page.evaluate("localStorage.getItem('ursa.zone')")).toBe('local');
  });
});
