import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launch } from './browser.js';
import { call, eventually, type Served, serve } from './server.js';

// issue #9, Done when: the scheduler editor page in Debian's Chromium against a real `ursa serve`.

const SHOTS = resolve(import.meta.dirname, '../../docs/screenshots');
const RUN_ID = /run_[0-9a-f-]{36}/;

let server: Served | undefined;
let context: BrowserContext | undefined;
let page: Page;

async function api(method: string, path: string, body?: string): Promise<Response> {
  if (server === undefined) throw new Error('the server is not running');
  return call(server, method, path, body);
}

/** Types a line into the focused CodeMirror editor as a person would, closing any completion first. */
async function typeLines(lines: readonly string[]): Promise<void> {
  for (const [i, line] of lines.entries()) {
    await page.keyboard.type(line);
    await page.keyboard.press('Escape');
    if (i < lines.length - 1) await page.keyboard.press('Enter');
  }
}

// Every assertion on the page waits for the page to get there (polling its state), bounded.
const WAIT = { timeout: 15_000, interval: 50 };
const textOf = (locator: Locator) =>
  expect.poll(async () => (await locator.allTextContents()).join('\n'), WAIT);
const countOf = (locator: Locator) => expect.poll(() => locator.count(), WAIT);

// The README's screenshots are refreshed on request (URSA_SCREENSHOTS=1 npm test), so that a test
// run leaves the working tree as it found it; otherwise they are taken into a temporary folder.
const shotsDir = process.env.URSA_SCREENSHOTS === '1' ? SHOTS : mkdtempSync(join(tmpdir(), 'ursa-shots-'));

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: resolve(shotsDir, name), fullPage: true });
}

/**
 * The browser first (a missing Chromium fails the test, with how to install it), then the server.
 * Called inside the test, so that a failure here is the test's failure, never a skip.
 */
async function start(): Promise<Served> {
  mkdirSync(shotsDir, { recursive: true });
  // The viewer's zone differs from the scheduler's, so the two columns of the cron helper differ.
  context = await launch({ timezoneId: 'America/New_York' });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  server = await serve();
  return server;
}

afterAll(async () => {
  await context?.close();
  await server?.stop();
});

describe('the scheduler editor page', () => {
  it('creates a scheduler by typing YAML, shows an inline error, the next runs, saves, fires and opens the run log', {
    timeout: 120_000,
  }, async () => {
    const served = await start();
    // A protected-from-agents scheduler written over the REST API: hidden from agents, not from here.
    const hidden = await api(
      'PUT',
      '/brain/acme/project/ops/scheduler/vault-audit',
      'description: Compliance audit of the vault\ncron: "0 0 4 * * SUN"\ntimezone: UTC\nrecipe: noop\nlockMode: hidden\ntags: [compliance]\n',
    );
    expect(hidden.status).toBe(201);
    expect(
      (
        await api(
          'PUT',
          '/brain/acme/project/ops/scheduler/backup',
          'description: Two-hourly backup of the ops database\ncron: "0 0 */2 * * *"\ntimezone: Europe/Berlin\nrecipe: noop\ntags: [backup]\n',
        )
      ).status,
    ).toBe(201);
    // A one-shot long past: it fires at once, late, and leaves an item in the admin's inbox.
    expect(
      (
        await api(
          'PUT',
          '/brain/acme/project/ops/scheduler/late-once',
          'description: late\nat: "2020-01-01T00:00:00Z"\nrecipe: noop\n',
        )
      ).status,
    ).toBe(201);

    // The page, served by `ursa serve` at `/`, asks for the token once (kept in session storage).
    await page.goto(served.url);
    const tokenField = page.getByLabel('API token');
    await tokenField.fill(served.token);
    await tokenField.press('Enter');
    expect(await page.evaluate("sessionStorage.getItem('ursa.token')")).toBe(served.token);

    // Tenant and project pickers.
    await page.getByLabel('Tenant', { exact: true }).fill('acme');
    await page.getByLabel('Project', { exact: true }).fill('ops');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'Schedulers of acme/ops' }).waitFor();
    const hiddenRow = page.locator('tr[data-scheduler="vault-audit"]');
    await textOf(hiddenRow).toContain('hidden');
    await textOf(hiddenRow).toContain('at 04:00, on Sunday');

    // A new scheduler, typed into CodeMirror.
    await page.getByRole('link', { name: 'New scheduler' }).click();
    await page.getByLabel('Name').fill('morning-report');
    await page.locator('.cm-content').click();
    await typeLines([
      'description: Morning report for the ops team',
      'cron: "0 30 2 * * MON#6"',
      'timezone: Europe/Berlin',
      'recipe: noop',
      'tags: [daily, report]',
    ]);
    // The bundled validator refuses the cron inline, before saving: in the list and in the editor.
    const problem = page.locator('#problems .problem');
    await countOf(problem).toBe(1);
    await textOf(problem).toContain('cron');
    await textOf(problem).toContain('MON#6');
    await textOf(problem).toContain('line 2');
    await countOf(page.locator('.cm-lint-marker-error')).toBe(1);
    await countOf(page.locator('.cm-lintRange-error')).toBe(1);
    await expect.poll(() => page.getByRole('button', { name: 'Create' }).isDisabled(), WAIT).toBe(true);
    await textOf(page.locator('.cron-helper')).toContain('Fix the problems above');
    await shot('editor-error.png');

    // Completion offers the schema's enum values after `overlap: `.
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('overlap: ');
    await page.keyboard.press('Control+Space');
    await textOf(page.locator('.cm-tooltip-autocomplete')).toContain('cancelPrevious');
    await page.keyboard.type('queue');
    await page.keyboard.press('Escape');
    // …and field names at the start of a line.
    await page.keyboard.press('Enter');
    await page.keyboard.type('lockM');
    await page.locator('.cm-tooltip-autocomplete li', { hasText: 'lockMode' }).click();
    await page.keyboard.type('full');
    await page.keyboard.press('Escape');
    await textOf(page.locator('.cm-line', { hasText: 'lockMode' })).toBe('lockMode: full');
    // The fields of issue #22 (bounds, jitter, pauseOnFailure, retry) come from the same schema:
    // each offered, then taken back.
    for (const [typed, field] of [
      ['maxR', 'maxRuns'],
      ['jitt', 'jitter'],
      ['pauseOnF', 'pauseOnFailure'],
      ['retr', 'retry'],
    ] as const) {
      await page.keyboard.press('Enter');
      await page.keyboard.type(typed);
      await textOf(page.locator('.cm-tooltip-autocomplete')).toContain(field);
      await page.keyboard.press('Escape');
      for (let i = 0; i < typed.length + 1; i++) await page.keyboard.press('Backspace');
      await textOf(page.locator('.cm-line', { hasText: 'lockMode' })).toBe('lockMode: full');
    }

    // Fix it: MON#6 becomes *, a daily 02:30 in Berlin (which DST touches twice a year).
    await page.locator('.cm-line', { hasText: 'MON#6' }).click();
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    for (let i = 0; i < 'MON#6'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('*');
    await textOf(page.locator('#problems')).toContain('No problems: the document is valid.');
    await countOf(page.locator('.cm-lint-marker-error')).toBe(0);

    // The cron helper: the next 5 fire times in the scheduler's zone and the viewer's, and DST notes.
    const helper = page.locator('.cron-helper');
    await textOf(helper).toContain('at 02:30, every day');
    await countOf(helper.locator('tbody tr')).toBe(5);
    await textOf(helper.locator('thead')).toContain('In Europe/Berlin');
    await textOf(helper.locator('thead')).toContain('In your zone (America/New_York)');
    const first = helper.locator('tbody tr').first();
    await textOf(first.locator('td').nth(1)).toMatch(/02:30:00 \+0[12]:00$/);
    await textOf(first.locator('td').nth(2)).toMatch(/(20|21):30:00 -0[45]:00$/);
    await countOf(helper.locator('.dst-notes li')).toBe(2);
    await textOf(helper.locator('.dst-notes')).toContain('clocks go forward 1 hour');
    await textOf(helper.locator('.dst-notes')).toContain('clocks go back 1 hour');

    // Save = PUT; the page then shows the saved scheduler.
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'morning-report', level: 1 }).waitFor();
    await textOf(page.getByRole('status').first()).toContain(
      'Created _vance/scheduler/morning-report.yaml (version 1)',
    );
    const saved = (await (await api('GET', '/brain/acme/project/ops/scheduler/morning-report')).json()) as {
      yaml: string;
    };
    expect(saved.yaml).toContain('cron: "0 30 2 * * *"');
    expect(saved.yaml).toContain('overlap: queue');

    // Fire (after its confirmation): the page says what became of the run, as ursa fire does
    // (started, or already ended), and links to it; it completes on the server's worker.
    await page.getByRole('button', { name: 'Fire now…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Fire' }).click();
    await textOf(page.getByRole('status').first()).toMatch(
      /^Fired morning-report: run_\S+ (started|ran and ended completed)\b.*\. Open the run$/,
    );
    const correlationId = RUN_ID.exec((await page.getByRole('status').first().textContent()) ?? '')?.[0];
    expect(correlationId).toBeDefined();
    await page.getByRole('link', { name: 'Open the run' }).click();
    await page.getByRole('heading', { name: `Run ${correlationId}` }).waitFor();
    await page.locator('[data-outcome="completed"]').waitFor({ timeout: 30_000 });
    const log = page.locator('.run-log');
    await textOf(log.locator('table.front-matter')).toContain(correlationId as string);
    await textOf(log.locator('table.front-matter')).toContain('manual');
    await textOf(log).toContain("Scheduler 'morning-report'");
    await textOf(log).toContain('TERMINATED outcome=completed');
    await page.getByRole('link', { name: /^proc_/ }).waitFor();
    await shot('run-detail.png');

    // Back at the scheduler, the run is in its history; opening it shows its log again.
    await page.locator('nav.crumbs').getByRole('link', { name: 'morning-report' }).click();
    const row = page.locator(`tr[data-run="${correlationId}"]`);
    await textOf(row).toContain('completed');
    await textOf(row).toContain('manual');
    await page.locator('.run-chart').waitFor();
    await shot('editor.png');
    await row.getByRole('link').click();
    await textOf(page.locator('.run-log')).toContain('TERMINATED outcome=completed');
    // The process link opens the process.
    await page.getByRole('link', { name: /^proc_/ }).click();
    await page.getByRole('heading', { name: /^Process proc_/ }).waitFor();
    await textOf(page.locator('dl.facts')).toContain('noop');

    // The hidden scheduler is listed, opens and saves like any other (spec §10b: REST and WebUI do not check lockMode).
    await page.getByRole('link', { name: 'Schedulers', exact: true }).click();
    await page.locator('tr[data-scheduler="vault-audit"]').getByRole('link', { name: 'vault-audit' }).click();
    await textOf(page.locator('.cm-content')).toContain('lockMode: hidden');
    await page.locator('.cm-line', { hasText: 'description:' }).click();
    await page.keyboard.press('End');
    await page.keyboard.type(' (reviewed)');
    await textOf(page.locator('#problems')).toContain('No problems');
    await page.getByRole('button', { name: 'Save' }).click();
    await textOf(page.getByRole('status').first()).toContain(
      'Saved _vance/scheduler/vault-audit.yaml (version 2)',
    );
    const edited = (await (await api('GET', '/brain/acme/project/ops/scheduler/vault-audit')).json()) as {
      yaml: string;
    };
    expect(edited.yaml).toContain('Compliance audit of the vault (reviewed)');
    expect(edited.yaml).toContain('lockMode: hidden');

    // Pause with a note (issue #22): the page says who paused it and why, Fire is off, the list
    // says paused; Resume ends it.
    await page.getByRole('button', { name: 'Pause…' }).click();
    await page.getByLabel('Why (shown beside the scheduler)').fill('auditors on leave');
    await page.getByRole('dialog').getByRole('button', { name: 'Pause' }).click();
    await textOf(page.getByRole('note')).toContain('Paused by ');
    await textOf(page.getByRole('note')).toContain(': auditors on leave');
    expect(await page.getByRole('button', { name: 'Fire now…' }).isDisabled()).toBe(true);
    const pausedDoc = (await (await api('GET', '/brain/acme/project/ops/scheduler/vault-audit')).json()) as {
      yaml: string;
      paused: { note: string } | null;
    };
    expect([pausedDoc.yaml.endsWith('enabled: false\n'), pausedDoc.paused?.note]).toEqual([
      true,
      'auditors on leave',
    ]);
    await page.getByRole('link', { name: 'Schedulers', exact: true }).click();
    const auditRow = page.locator('tr[data-scheduler="vault-audit"]');
    await textOf(auditRow).toContain('paused');
    expect(await auditRow.locator('span[title]', { hasText: 'paused' }).getAttribute('title')).toContain(
      'auditors on leave',
    );
    await auditRow.getByRole('link', { name: 'vault-audit' }).click();
    await page.getByRole('button', { name: 'Resume' }).click();
    await textOf(page.getByRole('status').first()).toContain('Resumed vault-audit');
    await page.getByRole('note').waitFor({ state: 'detached' });

    // Backfill (issue #22): the Sundays of November 2025 run, each once, even when asked again.
    // Typed with Z, the range is taken as it is; the status says it in the zone shown (New York).
    for (const queued of ['5 queued.', '0 queued; 5 had a run already.']) {
      await page.getByRole('button', { name: 'Backfill…' }).click();
      await page.getByLabel('From (oldest occurrence)').fill('2025-11-01T00:00:00Z');
      await page.getByLabel('To (newest occurrence, not later than now)').fill('2025-11-30T23:59:59Z');
      await page.getByRole('dialog').getByRole('button', { name: 'Backfill' }).click();
      await textOf(page.getByRole('status').first()).toContain(
        `Backfill of vault-audit: 5 occurrences from 2025-10-31 20:00:00 -04:00 to 2025-11-30 18:59:59 -05:00, ${queued}`,
      );
    }

    // The listing with filters, last runs and the 24-hour timeline.
    await page.getByRole('link', { name: 'Schedulers', exact: true }).click();
    const reportRow = page.locator('tr[data-scheduler="morning-report"]');
    await textOf(reportRow).toContain('completed');
    await textOf(reportRow).toContain('Europe/Berlin');
    await page.locator('.timeline svg').waitFor();
    await shot('listing.png');
    await page.getByLabel('Filter').fill('report');
    await countOf(page.locator('tbody tr[data-scheduler]')).toBe(1);
    await page.getByLabel('Filter').fill('');
    await page.getByLabel('Tag').selectOption('compliance');
    await countOf(page.locator('tbody tr[data-scheduler]')).toBe(1);
    await textOf(page.locator('tbody tr[data-scheduler]')).toContain('vault-audit');

    // Readable on a narrow window: nothing but the table's own box scrolls sideways.
    await page.setViewportSize({ width: 400, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });

    // The inbox: the late one-shot left an item for the token's user; mark it read.
    await eventually(
      async () => {
        const inbox = (await (await api('GET', '/brain/acme/inbox')).json()) as { items: unknown[] };
        return inbox.items.length > 0 ? true : undefined;
      },
      'the late one-shot inbox item',
      15_000,
    );
    await page.getByRole('link', { name: 'Inbox' }).click();
    const item = page.locator('.inbox-items li.unread');
    await countOf(item).toBe(1);
    await textOf(item).toContain('late');
    await item.getByRole('button', { name: 'Mark read' }).click();
    await textOf(page.getByRole('status').first()).toContain('Marked 1 item(s) read.');
    await countOf(page.locator('.inbox-items li.unread')).toBe(0);
  });
});
