import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { call, goHash, WAIT } from './page.js';
import { eventually, type Served } from './server.js';

/**
 * Helpers of the editor's accessibility tests (issue #23): axe-core on the page, where the focus
 * is, Tab until an element has it, a running run to stop, and a tour of every view and dialog.
 */

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
export const SCOPE = '#/p/acme/ops';
/**
 * The tenant whose inbox holds the tour's questions of agent runs (one open, one answered): apart
 * from acme, whose inbox the tests count.
 */
export const QUESTIONS = 'globex';
const PROJECT = '/brain/acme/project/ops';

/** axe-core's violations on the page as it is, one line each (rule, impact, where). */
export async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.addScriptTag({ path: AXE });
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
      v.nodes.map((n) => n.target.join(' ') + ' ' + n.failureSummary).join(' | ')))`);
}

/**
 * What makes the page wider than its window, if anything: the document itself, or an open
 * dialog (drawn above the page, it never widens the document) past the window's edge or
 * scrolling sideways in its own box.
 */
export function sideways(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const found = [];
    const width = document.documentElement.clientWidth;
    const page = document.documentElement.scrollWidth;
    if (page > width) {
      // The outermost elements that reach past the window's edge, to say where.
      const past = [...document.body.querySelectorAll('*')].filter(
        (el) => el.getBoundingClientRect().right > width && el.parentElement.getBoundingClientRect().right <= width,
      );
      const names = past.slice(0, 3).map((el) => el.tagName.toLowerCase() + (el.className ? '.' + el.className : ''));
      found.push('the page is ' + page + ' px wide in ' + width + ' (' + names.join(', ') + ')');
    }
    for (const d of document.querySelectorAll('dialog[open]')) {
      const box = d.getBoundingClientRect();
      if (box.left < 0 || box.right > width) found.push('a dialog spans ' + box.left + '..' + box.right);
      if (d.scrollWidth > d.clientWidth) found.push('a dialog scrolls sideways');
    }
    return found;
  })()`);
}

/** What has the focus: tag, id and name, for a readable failure. */
export const focused = (page: Page) =>
  page.evaluate(`(() => {
    const a = document.activeElement;
    if (a === null) return 'nothing';
    const name = (a.getAttribute('aria-label') ?? a.textContent ?? '').trim().replace(/\\s+/g, ' ');
    return a.tagName.toLowerCase() + (a.id === '' ? '' : '#' + a.id) + (name === '' ? '' : ' "' + name.slice(0, 80) + '"');
  })()`) as Promise<string>;

const isFocused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);

/** Presses `key` (Tab, or Shift+Tab) until `target` has the focus; fails when 60 presses do not get there. */
export async function tabTo(page: Page, target: Locator, key = 'Tab'): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < 60; i++) {
    if (await isFocused(target)) return;
    await page.keyboard.press(key);
  }
  throw new Error(`${key} never reached the element; the focus is on ${await focused(page)}`);
}

/** An assertion on what has the focus, polled until it holds (bounded). */
export function focusOn(page: Page): ReturnType<typeof expect.poll<Promise<string>>> {
  return expect.poll(() => focused(page), WAIT);
}

/**
 * A confirmation by keyboard: Enter on `opener` opens `dialog` with the focus on its Cancel;
 * Escape closes it with the focus back on `opener`; then, given `confirm` (the confirming
 * button's name), Enter opens it again and `key` on that button confirms.
 */
export async function escapeThenConfirm(
  page: Page,
  opener: Locator,
  dialog: Locator,
  confirm?: { readonly button: string; readonly key: 'Enter' | ' ' },
): Promise<void> {
  await tabTo(page, opener);
  await page.keyboard.press('Enter');
  await dialog.waitFor();
  await focusOn(page).toBe('button "Cancel"');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  await expect
    .poll(() => isFocused(opener), { ...WAIT, message: 'the focus is back on the opener' })
    .toBe(true);
  if (confirm === undefined) return;
  await page.keyboard.press('Enter');
  await tabTo(page, dialog.getByRole('button', { name: confirm.button, exact: true }));
  await page.keyboard.press(confirm.key);
  await dialog.waitFor({ state: 'hidden' });
}

/** The recipe of the scheduler `sleeper`: a shell that sleeps longer than the test file runs. */
export const SLEEPY =
  'description: Sleeps ten minutes\nengine: shell\ncommand: ["sh", "-c", "echo started; sleep 600"]\n';
export const SLEEPER =
  'description: A long run to stop\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: sleepy\noverlap: skip\n';

interface RunRow {
  readonly correlationId: string;
  readonly state: string;
  readonly processId: string | null;
}

async function sleeperRuns(server: Served): Promise<RunRow[]> {
  const response = await call(server, 'GET', `${PROJECT}/scheduler/sleeper/runs`);
  return ((await response.json()) as { runs: RunRow[] }).runs;
}

/** A run of `sleeper` whose process runs: the one running, else one fired over REST and started. */
export async function running(server: Served): Promise<{ id: string; processId: string }> {
  const live = (await sleeperRuns(server)).find((r) => r.state === 'running' && r.processId !== null);
  if (live !== undefined) return { id: live.correlationId, processId: live.processId as string };
  const fired = await call(server, 'POST', `${PROJECT}/scheduler/sleeper/fire`);
  expect(fired.status).toBe(202);
  const id = ((await fired.json()) as { correlationId: string }).correlationId;
  return eventually(
    async () => {
      const run = (await (await call(server, 'GET', `${PROJECT}/runs/${id}`)).json()) as RunRow;
      return run.state === 'running' && run.processId !== null ? { id, processId: run.processId } : undefined;
    },
    "sleeper's run starts its process",
    30_000,
  );
}

/** Stops every running run of `sleeper` (its sleeping shell must not outlive the test file). */
export async function stopRunning(server: Served): Promise<void> {
  for (const r of await sleeperRuns(server)) {
    if (r.state !== 'running' || r.processId === null) continue;
    await call(server, 'POST', `${PROJECT}/processes/${r.processId}/stop`, { reason: 'test ends' });
  }
}

/** `check`: a look at the page as it is (axe-core, its width…); `view` names what it shows. */
export type Check = (page: Page, view: string) => Promise<void>;

/** Opens the dialog `button` opens, checks it, and closes it with Escape. */
async function checkDialog(page: Page, button: Locator, check: Check, view: string): Promise<void> {
  await button.click();
  await page.getByRole('dialog').waitFor();
  await check(page, view);
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
}

/**
 * Every view and dialog of the signed-in editor, each once it has loaded, `check`ed: the list
 * (also with every time in UTC), the editor of `heartbeat` with each dialog, its problems and its
 * completion list, a new scheduler, the run `runId` and its process, a running run on its
 * scheduler's editor, its own page with Stop's dialog and its process's page with Stop, the
 * version history of `report` with a diff open and Restore's dialog, the trash and Restore's
 * dialog, a recipe, the inbox, and the inbox of {@link QUESTIONS} with its questions.
 */
export async function tour(page: Page, server: Served, runId: string, check: Check): Promise<void> {
  // Leaving the edited document asks first (the unsaved-changes guard): the tour leaves.
  page.on('dialog', (question) => void question.accept());
  const button = (name: string) => page.getByRole('button', { name, exact: true });
  await goHash(page, SCOPE);
  await page.locator('tr[data-scheduler="heartbeat"]').waitFor();
  await page.locator('.timeline svg').waitFor();
  await check(page, 'list');
  const utc = page.locator('button.zone-toggle');
  for (const pressed of ['true', 'false']) {
    await utc.click();
    await expect.poll(() => utc.getAttribute('aria-pressed'), WAIT).toBe(pressed);
    if (pressed === 'true') await check(page, 'list in UTC');
  }

  await goHash(page, `${SCOPE}/s/heartbeat`);
  await page.locator(`tr[data-run="${runId}"]`).waitFor();
  await page.locator('.cron-helper tbody tr').first().waitFor();
  await check(page, 'editor');
  for (const [name, dialog] of [
    ['Fire now…', 'fire'],
    ['Backfill…', 'backfill'],
    ['Pause…', 'pause'],
    ['Delete…', 'delete'],
  ] as const) {
    await checkDialog(page, button(name), check, `${dialog} dialog`);
  }
  // The editor with problems listed…
  await page.locator('.cm-line', { hasText: 'cron:' }).click();
  await page.keyboard.press('End');
  await page.keyboard.type(' nonsense');
  await page.locator('#problems .problem').first().waitFor();
  await check(page, 'editor with problems');
  // …and with the completion list open.
  await page.keyboard.press('Enter');
  await page.keyboard.type('overlap: ');
  await page.keyboard.press('Control+Space');
  await page.locator('.cm-tooltip-autocomplete li[aria-selected]').waitFor();
  await check(page, 'editor completing');
  await page.keyboard.press('Escape');

  await goHash(page, `${SCOPE}/new`);
  await page.getByRole('heading', { level: 1, name: 'New scheduler' }).waitFor();
  await check(page, 'new scheduler');

  await goHash(page, `${SCOPE}/s/heartbeat/run/${runId}`);
  await page.locator('.run-log').waitFor();
  await check(page, 'run');
  await page.getByRole('link', { name: /^proc_/ }).click();
  await page.locator('dl.facts').waitFor();
  await check(page, 'process');

  // A running run: on its scheduler's editor and on its own page, each with Stop.
  const live = await running(server);
  await goHash(page, `${SCOPE}/s/sleeper`);
  const stopActive = page.locator('.active-run').getByRole('button', { name: 'Stop…' });
  await stopActive.waitFor();
  await check(page, 'editor with an active run');
  await checkDialog(page, stopActive, check, 'stop dialog of the active run');
  await goHash(page, `${SCOPE}/s/sleeper/run/${live.id}`);
  await page.locator('[data-state="running"]').waitFor();
  await check(page, 'running run');
  await checkDialog(page, button('Stop…'), check, 'stop dialog');
  // Its process's page, followed while it runs, with Stop.
  await goHash(page, `${SCOPE}/s/sleeper/process/${live.processId}`);
  await button('Stop…').waitFor();
  await check(page, 'running process');

  // A version history with a diff open.
  await goHash(page, `${SCOPE}/s/report`);
  // The newest version that is not the current one: it differs from it (an older one may not,
  // once restored).
  await button('Show history').click();
  await page
    .getByRole('button', { name: /^Compare version \d+$/ })
    .first()
    .click();
  await page.locator('.diff-view ins').first().waitFor();
  await check(page, 'version history with a diff');
  const restore = page.getByRole('button', { name: /^Restore version \d+…$/ });
  await checkDialog(page, restore, check, 'restore version dialog');

  await goHash(page, `${SCOPE}/trash`);
  const trashed = page.locator('table.trash tbody tr').first();
  await trashed.waitFor();
  await check(page, 'trash');
  await checkDialog(page, trashed.getByRole('button'), check, 'restore from the trash dialog');

  await goHash(page, `${SCOPE}/recipe/sleepy`);
  await page.locator('.recipe-view pre.code').waitFor();
  await check(page, 'recipe');

  await goHash(page, '#/inbox/acme');
  await page.locator('.inbox-items li').first().waitFor();
  await check(page, 'inbox');

  // Questions of agent runs, one open with its field and one answered (read: shown on request).
  await goHash(page, `#/inbox/${QUESTIONS}`);
  await page.getByRole('checkbox', { name: 'Show read items too' }).check();
  await page.locator('.inbox-items .answer-form').waitFor();
  await page.locator('.inbox-items .answered').waitFor();
  await check(page, 'inbox with questions');
}
