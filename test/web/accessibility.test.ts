import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentService, startAgentService } from '../support/agent-service.js';
import {
  escapeThenConfirm,
  focusOn,
  QUESTIONS,
  running,
  SCOPE,
  SLEEPER,
  SLEEPY,
  sideways,
  stopRunning,
  tabTo,
  tour,
  violations,
} from './a11y.js';
import { launch } from './browser.js';
import { apply, call, countOf, textOf, WAIT } from './page.js';
import { answerOverRest, ask, askingScheduler } from './questions.js';
import { eventually, type Served, serve } from './server.js';

// issue #23 item 6: the editor's accessibility held by tests in Debian's Chromium against a real
// `ursa serve`: axe-core on every view and dialog in both colour schemes, keyboard walks, titles
// and focus, the skip link, announcements, the inbox's names, and the layout at 420 px.

const LATE = ['late-one', 'late-two', 'late-three'];
const RUN_ID = /run_[0-9a-f-]{36}/;
/** How late a one-shot ran, as its inbox item says it: "7 years 2 days", "3 minutes". */
const LATE_BY = String.raw`\d+ \w+( \d+ \w+)?`;
const REPORT = (description: string) =>
  `description: ${description}\ncron: "0 0 6 * * MON"\ntimezone: UTC\nrecipe: noop\n`;

let server: Served;
let service: AgentService;
let context: BrowserContext;
/** A run of heartbeat that ended, with its run log. */
let runId: string;

const api = (method: string, path: string, body?: string) => call(server, method, path, body);

async function put(name: string, yaml: string, status = 201): Promise<void> {
  const response = await api('PUT', `/brain/acme/project/ops/scheduler/${name}`, yaml);
  expect(response.status).toBe(status);
}

beforeAll(async () => {
  context = await launch({ timezoneId: 'Europe/Paris', bypassCSP: true });
  server = await serve({ publicUrl: true });
  await put(
    'heartbeat',
    'description: Hourly heartbeat\ncron: "0 0 * * * *"\ntimezone: UTC\nrecipe: noop\ntags: [ops]\n',
  );
  // sleeper runs a sleeping shell (a run to stop); report has two versions (a diff to show);
  // retired is in the trash (a document to restore).
  await apply(server, 'acme', 'ops', { '_vance/recipes/sleepy.yaml': SLEEPY });
  await put('sleeper', SLEEPER);
  await put('report', REPORT('Weekly report'));
  await put('report', REPORT('Weekly report, later'), 200);
  await put('retired', 'description: Retired\ncron: "0 0 1 * * *"\ntimezone: UTC\nrecipe: noop\n');
  expect((await api('DELETE', '/brain/acme/project/ops/scheduler/retired')).status).toBe(200);
  // A one-shot long past fires at once, late, and leaves an item in the admin's inbox: three items.
  for (const name of LATE) await put(name, 'description: late\nat: "2020-01-01T00:00:00Z"\nrecipe: noop\n');
  const fired = await api('POST', '/brain/acme/project/ops/scheduler/heartbeat/fire');
  expect(fired.status).toBe(202);
  runId = ((await fired.json()) as { correlationId: string }).correlationId;
  await eventually(
    async () => {
      const run = (await (await api('GET', `/brain/acme/project/ops/runs/${runId}`)).json()) as {
        outcome?: string;
      };
      const inbox = (await (await api('GET', '/brain/acme/inbox')).json()) as { items: unknown[] };
      return run.outcome === 'completed' && inbox.items.length === LATE.length ? true : undefined;
    },
    'the fired run ends and the late one-shot leaves an inbox item',
    30_000,
  );
  // Two agent runs ask the admin in the inbox of another tenant: one question waits for its
  // answer, the other is answered.
  service = await startAgentService();
  await askingScheduler(
    server,
    service,
    QUESTIONS,
    'deploy',
    'Which branch should I deploy?\nmain or develop',
  );
  await askingScheduler(server, service, QUESTIONS, 'ship', 'Ship it today?');
  await ask(server, QUESTIONS, 'deploy');
  const answered = await ask(server, QUESTIONS, 'ship');
  expect((await answerOverRest(server, QUESTIONS, answered.id, 'Yes, after lunch.')).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await context?.close();
  if (server !== undefined) await stopRunning(server);
  await service?.close();
  await server?.stop();
});

/**
 * A new tab (its own session storage), signed in, at `hash`. `fakeClock`: the timers are
 * Playwright's (the clock is the whole browser context's: the test resumes it when done).
 */
async function signedIn(hash = SCOPE, fakeClock = false): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  if (fakeClock) await page.clock.install();
  await page.goto(server.url);
  await page.getByLabel('API token').fill(server.token);
  await page.getByLabel('API token').press('Enter');
  await page.getByRole('heading', { level: 1, name: /^Schedulers of / }).waitFor();
  await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
  return page;
}

describe('the editor for keyboards, screen readers and small screens (issue #23)', () => {
  it('axe-core reports no violation on any view or dialog, in the light and the dark scheme', {
    timeout: 240_000,
  }, async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const found: string[] = [];
      const check = async (page: Page, view: string) => {
        for (const v of await violations(page)) found.push(`${scheme} ${view}: ${v}`);
      };
      const login = await context.newPage();
      await login.emulateMedia({ colorScheme: scheme });
      await login.goto(server.url);
      await login.getByLabel('API token').waitFor();
      await check(login, 'sign-in');
      // A refused token: the sign-in page with its error.
      await login.getByLabel('API token').fill('ursa_not-a-token');
      await login.getByLabel('API token').press('Enter');
      await login.getByRole('alert').waitFor();
      await check(login, 'sign-in refused');
      await login.close();

      const page = await signedIn();
      await page.emulateMedia({ colorScheme: scheme });
      await tour(page, server, runId, check);
      await page.close();
      expect(found).toEqual([]);
    }
  });

  it('each view change sets the title and moves the focus to the view heading', async () => {
    const login = await context.newPage();
    await login.goto(server.url);
    await expect.poll(() => login.title(), WAIT).toBe('Sign in — Ursa');
    await login.close();

    const page = await signedIn();
    for (const [hash, title, heading] of [
      [SCOPE, 'Schedulers of acme/ops — Ursa', 'Schedulers of acme/ops'],
      [`${SCOPE}/s/heartbeat`, 'heartbeat — Ursa', 'heartbeat'],
      [`${SCOPE}/new`, 'New scheduler — Ursa', 'New scheduler'],
      [`${SCOPE}/s/heartbeat/run/${runId}`, `Run ${runId} of heartbeat — Ursa`, `Run ${runId}`],
      ['#/inbox/acme', 'Inbox (acme) — Ursa', 'Inbox (acme)'],
      [`${SCOPE}/trash`, 'Trash of acme/ops — Ursa', 'Trash of acme/ops'],
      [`${SCOPE}/recipe/sleepy`, 'Recipe sleepy — Ursa', 'Recipe sleepy'],
    ] as const) {
      await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
      await expect.poll(() => page.title(), WAIT).toBe(title);
      await focusOn(page).toBe(`h1#${await page.locator('main h1').getAttribute('id')} "${heading}"`);
      expect(await page.locator('main h1').getAttribute('tabindex')).toBe('-1');
    }
    // A link followed with the keyboard: the process of the run.
    await page.evaluate(`window.location.hash = '${SCOPE}/s/heartbeat/run/${runId}'`);
    const processLink = page.getByRole('link', { name: /^proc_/ });
    await tabTo(page, processLink);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.title(), WAIT).toMatch(/^Process proc_\S+ of heartbeat — Ursa$/);
    await focusOn(page).toMatch(/^h1#process-title "Process proc_/);
    await page.close();
  });

  it('the skip link moves the focus to the main content and leaves the route as it is', async () => {
    const page = await signedIn(`${SCOPE}/s/heartbeat`);
    // Loaded afresh (the tab keeps its token), the page starts at the top: the skip link comes first.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'heartbeat' }).waitFor();
    await page.keyboard.press('Tab');
    await focusOn(page).toBe('a "Skip to content"');
    await page.keyboard.press('Enter');
    await focusOn(page).toMatch(/^main#main /);
    expect(await page.evaluate('window.location.hash')).toBe(`${SCOPE}/s/heartbeat`);
    expect(await page.title()).toBe('heartbeat — Ursa');
    // The next Tab is in the main content: its breadcrumb.
    await page.keyboard.press('Tab');
    await focusOn(page).toBe('a "acme/ops"');
    await page.close();
  });

  it('a keyboard walk reaches and operates every action: sign in, open, save, reload, pause, resume, backfill, fire, mark read', {
    timeout: 120_000,
  }, async () => {
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(server.url);
    // Sign in.
    await tabTo(page, page.getByLabel('API token'));
    await page.keyboard.type(server.token);
    await tabTo(page, page.getByRole('button', { name: 'Sign in' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toMatch(/^h1#list-title "Schedulers of /);
    // The tenant and project, back from the heading.
    await tabTo(page, page.getByLabel('Tenant', { exact: true }), 'Shift+Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('acme');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('ops');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#list-title "Schedulers of acme/ops"');
    // Open a scheduler from the list.
    await tabTo(
      page,
      page.locator('tr[data-scheduler="heartbeat"]').getByRole('link', { name: 'heartbeat' }),
    );
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#editor-title "heartbeat"');
    // Edit, leave the editor with Tab, save.
    await tabTo(page, page.locator('.cm-content'));
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# walked');
    await page.keyboard.press('Escape');
    await tabTo(page, page.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await textOf(page.getByRole('status').first()).toContain('(version 2)');
    await focusOn(page).toBe('button "Save"');
    // Reload with Space.
    await tabTo(page, page.getByRole('button', { name: 'Reload' }));
    await page.keyboard.press(' ');
    await textOf(page.getByRole('status').first()).toContain("Reloaded the project's scheduler documents");
    await focusOn(page).toBe('button "Reload"');
    // Pause with a note typed in its dialog, then resume: the focus stays on the toggle.
    await tabTo(page, page.getByRole('button', { name: 'Pause…' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('input#pause-note');
    await page.keyboard.type('walking');
    await page.keyboard.press('Enter');
    await textOf(page.getByRole('status').first()).toContain('Paused heartbeat.');
    await focusOn(page).toBe('button "Resume"');
    await page.keyboard.press('Enter');
    await textOf(page.getByRole('status').first()).toContain('Resumed heartbeat');
    await focusOn(page).toBe('button "Pause…"');
    // The backfill dialog opens with Enter and closes with Escape, the focus back on its opener.
    await tabTo(page, page.getByRole('button', { name: 'Backfill…' }));
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await focusOn(page).toBe('input#backfill-from');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await focusOn(page).toBe('button "Backfill…"');
    // The delete dialog likewise, its Cancel first; nothing is deleted.
    await tabTo(page, page.getByRole('button', { name: 'Delete…' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('button "Cancel"');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await focusOn(page).toBe('button "Delete…"');
    // Fire asks first, its Cancel first: Escape fires nothing and gives the focus back to Fire now….
    const fireNow = page.getByRole('button', { name: 'Fire now…' });
    const fireDialog = page.getByRole('dialog', { name: 'Fire heartbeat now?' });
    const status = page.getByRole('status').first();
    await tabTo(page, fireNow, 'Shift+Tab');
    await page.keyboard.press('Enter');
    await fireDialog.waitFor();
    await focusOn(page).toBe('button "Cancel"');
    await page.keyboard.press('Escape');
    await fireDialog.waitFor({ state: 'hidden' });
    await focusOn(page).toBe('button "Fire now…"');
    expect(await status.textContent()).toBe('Resumed heartbeat: it fires from its next occurrence.');
    // Opened again with Space and confirmed with Space on its Fire: the focus stays on Fire now….
    await page.keyboard.press(' ');
    await fireDialog.waitFor();
    await tabTo(page, fireDialog.getByRole('button', { name: 'Fire', exact: true }));
    await page.keyboard.press(' ');
    // It says what became of the run, as `ursa fire` does (a noop run may have ended already).
    await textOf(status).toMatch(
      /^Fired heartbeat: run_[0-9a-f-]{36} (started( \(process proc_\S+\))?|ran and ended completed)\. Open the run$/,
    );
    await fireDialog.waitFor({ state: 'hidden' });
    await focusOn(page).toBe('button "Fire now…"');
    const fired = RUN_ID.exec((await status.textContent()) ?? '')?.[0] as string;
    // The run opens from the status's link with the focus on its heading, and its end is announced.
    await tabTo(page, page.getByRole('link', { name: 'Open the run' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe(`h1#run-title "Run ${fired}"`);
    await textOf(page.locator('#run-end')).toBe(`Run ${fired} ended: completed`);
    // Mark an inbox item read with Space: the focus goes on to the next item's Mark read.
    await tabTo(page, page.getByRole('link', { name: 'Inbox' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#inbox-title "Inbox (acme)"');
    const marks = page.getByRole('button', { name: /^Mark read: / });
    await countOf(marks).toBe(3);
    const next = await marks.nth(1).getAttribute('id');
    await tabTo(page, marks.first());
    await page.keyboard.press(' ');
    await textOf(page.getByRole('status').first()).toBe('Marked 1 item(s) read.');
    await countOf(marks).toBe(2);
    await focusOn(page).toMatch(new RegExp(`^button#${next} "Mark read: late-`));
    // Select one with Space, then Mark selected read: the focus goes on to the last one left.
    await tabTo(page, page.getByRole('checkbox', { name: /^Select: / }).first(), 'Shift+Tab');
    await page.keyboard.press(' ');
    await tabTo(page, page.getByRole('button', { name: 'Mark selected read' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await countOf(marks).toBe(1);
    await focusOn(page).toMatch(/^button#mark-\d+ "Mark read: late-/);
    await page.close();
  });

  it('a keyboard walk through the new actions: the zone toggle, dialogs closed with Cancel, Stop, version history, a recipe, the trash', {
    timeout: 120_000,
  }, async () => {
    const live = await running(server);
    const page = await signedIn(`${SCOPE}/s/sleeper`);
    await focusOn(page).toBe('h1#editor-title "sleeper"');
    const status = page.getByRole('status').first();
    // The zone toggle says what it shows and what a press shows: Space presses it (UTC) and
    // Enter releases it, the focus stays on it.
    const utc = page.getByRole('button', { name: /^Times in / });
    await tabTo(page, utc, 'Shift+Tab');
    await focusOn(page).toBe('button "Times in Europe/Paris · show UTC"');
    await page.keyboard.press(' ');
    await textOf(page.locator('#zone-now')).toBe('Times in UTC');
    expect(await utc.getAttribute('aria-pressed')).toBe('true');
    await focusOn(page).toBe('button "Times in UTC · show Europe/Paris"');
    await page.keyboard.press('Enter');
    await textOf(page.locator('#zone-now')).toBe('Times in Europe/Paris');
    expect(await utc.getAttribute('aria-pressed')).toBe('false');
    await focusOn(page).toBe('button "Times in Europe/Paris · show UTC"');
    // Each dialog closed with its Cancel gives the focus back to the button that opened it.
    for (const opener of ['Pause…', 'Backfill…', 'Delete…', 'Fire now…']) {
      await tabTo(page, page.getByRole('button', { name: opener, exact: true }));
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await tabTo(page, dialog.getByRole('button', { name: 'Cancel' }));
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      await focusOn(page).toBe(`button "${opener}"`);
    }
    expect(await status.textContent()).toBe('');
    // A dialog's submit (Enter in its field) ends with the focus on its opener too.
    await tabTo(page, page.getByRole('button', { name: 'Backfill…' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('input#backfill-from');
    await page.keyboard.press('Enter');
    await textOf(status).toMatch(/^Backfill of sleeper: 0 occurrences from /);
    await focusOn(page).toBe('button "Backfill…"');
    // The active run's Stop asks; Escape leaves it running, the focus back on Stop….
    const active = page.locator('.active-run');
    const stopDialog = page.getByRole('dialog', { name: 'Stop this run?' });
    await escapeThenConfirm(page, active.getByRole('button', { name: 'Stop…' }), stopDialog);
    // The running run's page, from the active run's link: Stop confirmed with Enter on Stop run.
    await tabTo(page, active.getByRole('link', { name: live.id }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe(`h1#run-title "Run ${live.id}"`);
    await escapeThenConfirm(page, page.getByRole('button', { name: 'Stop…' }), stopDialog, {
      button: 'Stop run',
      key: 'Enter',
    });
    // Stop leaves with the run's end, which is announced; the focus goes to the heading.
    await textOf(page.locator('#run-end')).toBe(`Run ${live.id} ended: cancelled`);
    await countOf(page.getByRole('button', { name: 'Stop…' })).toBe(0);
    await focusOn(page).toBe(`h1#run-title "Run ${live.id}"`);

    // The version history of report, from the list: shown, a version compared, then restored.
    await tabTo(page, page.getByRole('link', { name: 'acme/ops' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#list-title "Schedulers of acme/ops"');
    await tabTo(page, page.locator('tr[data-scheduler="report"]').getByRole('link', { name: 'report' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#editor-title "report"');
    await tabTo(page, page.getByRole('button', { name: 'Show history' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('button "Hide history"');
    await tabTo(page, page.getByRole('button', { name: 'Compare version 1' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h3#diff-title "Version 1 against the current version 2"');
    await escapeThenConfirm(
      page,
      page.getByRole('button', { name: 'Restore version 1…' }),
      page.getByRole('dialog', { name: 'Restore version 1 of report?' }),
      { button: 'Restore', key: ' ' },
    );
    await textOf(status).toBe('Restored version 1 of report as version 3.');
    // The diff and its Restore are gone: the focus is on the history's heading.
    await focusOn(page).toBe('h2#versions-title "Version history"');

    // The recipe report runs, one Enter away.
    await tabTo(page, page.locator('.recipe-link').getByRole('link', { name: 'noop' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#recipe-title "Recipe noop"');
    expect(await page.title()).toBe('Recipe noop — Ursa');

    // The trash, from the list: a restore asked, escaped, then confirmed with Space.
    await tabTo(page, page.getByRole('link', { name: 'acme/ops' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('link', { name: 'Trash', exact: true }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#trash-title "Trash of acme/ops"');
    const restoreTrashed = page.getByRole('button', { name: 'Restore retired.yaml…' });
    await escapeThenConfirm(
      page,
      restoreTrashed,
      page.getByRole('dialog', { name: 'Restore retired.yaml?' }),
      {
        button: 'Restore',
        key: ' ',
      },
    );
    await textOf(status).toBe('Restored retired.yaml to _vance/scheduler/retired.yaml. Open retired');
    // Its row (and the focused button) left with the restore: the focus is on the heading.
    await countOf(restoreTrashed).toBe(0);
    await focusOn(page).toBe('h1#trash-title "Trash of acme/ops"');
    await tabTo(page, page.getByRole('link', { name: 'Open retired' }));
    await page.keyboard.press('Enter');
    await focusOn(page).toBe('h1#editor-title "retired"');
    await page.close();
  });

  it('the focus never drops to the page after Save, Reload, Mark read or a refused token', {
    timeout: 60_000,
  }, async () => {
    // A refused token: the focus is in the token field, described by the error.
    const login = await context.newPage();
    await login.goto(server.url);
    await login.getByLabel('API token').fill('ursa_not-a-token');
    await login.getByRole('button', { name: 'Sign in' }).click();
    await login.getByRole('alert').waitFor();
    await focusOn(login).toBe('input#token');
    expect(await login.getByLabel('API token').getAttribute('aria-describedby')).toBe('token-error');
    expect(await login.getByLabel('API token').getAttribute('aria-invalid')).toBe('true');
    await login.close();

    const page = await signedIn(SCOPE);
    await page.locator('tr[data-scheduler="heartbeat"]').waitFor();
    await page.getByRole('button', { name: 'Reload' }).click();
    await textOf(page.getByRole('status').first()).toContain('Reloaded:');
    await focusOn(page).toBe('button "Reload"');

    await page.evaluate(`window.location.hash = '${SCOPE}/s/heartbeat'`);
    await page.locator('.cm-line', { hasText: 'description:' }).click();
    await page.keyboard.press('End');
    await page.keyboard.type(' (checked)');
    await page.getByRole('button', { name: 'Save' }).click();
    await textOf(page.getByRole('status').first()).toContain('Saved _vance/scheduler/heartbeat.yaml');
    await focusOn(page).toBe('button "Save"');
    await page.getByRole('button', { name: 'Reload' }).click();
    await textOf(page.getByRole('status').first()).toContain("Reloaded the project's scheduler documents");
    await focusOn(page).toBe('button "Reload"');

    // The last unread item marked read: the focus goes to the inbox's heading.
    await page.evaluate(`window.location.hash = '#/inbox/acme'`);
    const marks = page.getByRole('button', { name: /^Mark read: / });
    await countOf(marks).toBeGreaterThan(0);
    while ((await marks.count()) > 0) {
      const before = await marks.count();
      await marks.first().click();
      await countOf(marks).toBe(before - 1);
      await focusOn(page).not.toMatch(/^body/);
    }
    await focusOn(page).toBe('h1#inbox-title "Inbox (acme)"');
    await page.close();
  });

  it('announcements are short: the problem count once typing pauses, never every keystroke', async () => {
    // The page's clock runs until the editor is there, then stands still and is stepped.
    try {
      const page = await signedIn(`${SCOPE}/s/heartbeat`, true);
      const announcer = page.locator('#problems-announcement');
      await textOf(announcer).toBe('No problems: the document is valid.');
      expect(await announcer.getAttribute('role')).toBe('status');
      // The visible list of problems is no live region (it changed on every keystroke).
      expect(
        await page.locator('#problems').evaluate((el) => el.closest('[aria-live], [role="status"]')),
      ).toBe(null);
      // Every text the announcer takes, in order.
      await page.evaluate(`(() => {
      const el = document.getElementById('problems-announcement');
      window.said = [];
      new MutationObserver(() => window.said.push(el.textContent)).observe(el, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    })()`);
      const said = () => page.evaluate('window.said') as Promise<string[]>;
      await page.locator('.cm-line', { hasText: 'cron:' }).click();
      await page.keyboard.press('End');
      await page.clock.pauseAt(((await page.evaluate('Date.now()')) as number) + 1000);
      // Typed while the clock stands still: the list shows the problem, the announcer waits.
      await page.keyboard.type(' nonsense here');
      await page.keyboard.press('Escape');
      await countOf(page.locator('#problems .problem')).toBeGreaterThan(0);
      const count = await page.locator('#problems .problem').count();
      const text = `${count} ${count === 1 ? 'problem' : 'problems'} in the document.`;
      await page.clock.runFor(900);
      expect(await said()).toEqual([]);
      await page.clock.runFor(300);
      await expect.poll(said, WAIT).toEqual([text]);
      // Back to a valid document: one more announcement, a second after the last keystroke.
      for (let i = 0; i < ' nonsense here'.length; i++) await page.keyboard.press('Backspace');
      await textOf(page.locator('#problems')).toBe('No problems: the document is valid.');
      await page.clock.runFor(900);
      expect(await said()).toEqual([text]);
      await page.clock.runFor(300);
      await expect.poll(said, WAIT).toEqual([text, 'No problems: the document is valid.']);
      await page.close();
    } finally {
      await context.clock.resume();
    }
  });

  it('inbox controls are named after their item', async () => {
    const page = await signedIn('#/inbox/acme');
    await page.getByRole('checkbox', { name: 'Show read items too' }).check();
    const items = page.locator('.inbox-items li');
    await countOf(items).toBe(LATE.length);
    for (const name of LATE) {
      const title = new RegExp(`^${name} ran ${LATE_BY} late$`);
      const item = items.filter({ has: page.locator('.item-title strong', { hasText: title }) });
      await countOf(item).toBe(1);
      const subject = (await item.locator('.item-title strong').textContent()) as string;
      await item.getByRole('checkbox', { name: `Select: ${subject}`, exact: true }).waitFor();
      await item.getByRole('link', { name: `the run of ${subject}`, exact: true }).waitFor();
    }
    await page.close();
    // An unread item's Mark read: a fresh one-shot, late, leaves one.
    await put('late-four', 'description: late\nat: "2020-01-01T00:00:00Z"\nrecipe: noop\n');
    const inbox = await signedIn('#/inbox/acme');
    await inbox
      .getByRole('button', { name: new RegExp(`^Mark read: late-four ran ${LATE_BY} late$`) })
      .waitFor();
    await inbox.close();
  });

  it('at 420 px no view or dialog scrolls sideways, and the run history shows every column at 1280 px', {
    timeout: 120_000,
  }, async () => {
    const page = await signedIn(SCOPE);
    await page.setViewportSize({ width: 420, height: 800 });
    const found: string[] = [];
    await tour(page, server, runId, async (shown, view) => {
      for (const v of [...(await sideways(shown)), ...(await violations(shown))]) found.push(`${view}: ${v}`);
    });
    expect(found).toEqual([]);
    const login = await context.newPage();
    await login.setViewportSize({ width: 420, height: 800 });
    await login.goto(server.url);
    await login.getByLabel('API token').waitFor();
    expect(await sideways(login)).toEqual([]);
    await login.close();

    // The run history: at 1280 px every column is in view; at 420 px the table scrolls in its own box.
    await page.evaluate(`window.location.hash = '${SCOPE}/s/heartbeat'`);
    const wrap = page.locator('.history .table-wrap');
    await wrap.locator(`tr[data-run="${runId}"]`).waitFor();
    const box = () =>
      wrap.evaluate((el) => ({
        fits: el.scrollWidth <= el.clientWidth,
        scrolls: el.ownerDocument.defaultView?.getComputedStyle(el).overflowX === 'auto',
      }));
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect.poll(box, WAIT).toEqual({ fits: true, scrolls: true });
    await page.setViewportSize({ width: 420, height: 800 });
    expect((await box()).scrolls).toBe(true);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(420);
    await page.close();
  });
});
