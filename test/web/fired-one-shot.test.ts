import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launch } from './browser.js';
import { call, goHash, signIn, textOf, visibleText, WAIT } from './page.js';
import { type Served, serve } from './server.js';

// issue #23 item 2: a one-shot that fired stays findable in the editor without cluttering the list
// (no "expired" entry): a section of the listing names it with its run, and its editor says when
// it fired, which run, and where its document is, with the way to the trash.

const P = '/brain/acme/project/ops';
const HASH = '#/p/acme/ops';
// Long past: it fires at once when written, as a missed one-shot does.
const ONCE = 'description: once\nat: "2020-01-01T00:00:00Z"\ntimezone: UTC\nrecipe: noop\n';

let served: Served | undefined;
let context: BrowserContext | undefined;

afterAll(async () => {
  await context?.close();
  await served?.stop();
});

describe('a fired one-shot in the editor (issue #23)', () => {
  it('is listed under the one-shots that fired, and its editor says what became of it', {
    timeout: 90_000,
  }, async () => {
    served = await serve();
    context = await launch({ timezoneId: 'UTC' });
    const page: Page = await context.newPage();
    page.setDefaultTimeout(15_000);
    expect((await call(served, 'PUT', `${P}/scheduler/once`, ONCE)).status).toBe(201);
    const s = served;
    const firedOnes = async () =>
      (
        (await (await call(s, 'GET', `${P}/scheduler?all=true`)).json()) as {
          fired: { name: string; correlationId: string }[];
        }
      ).fired;
    // The server's worker fires it and moves it to the trash: poll the listing, bounded.
    await expect
      .poll(async () => (await firedOnes()).map((f) => f.name), { ...WAIT, timeout: 30_000 })
      .toEqual(['once']);
    const { correlationId } = (await firedOnes())[0] as { correlationId: string };

    await signIn(page, s, HASH);
    const section = page.getByRole('region', { name: 'One-shots that fired' });
    await textOf(section).toContain('once, due 2020-01-01 00:00:00Z');
    await section.getByRole('link', { name: 'its run' }).click();
    await page.getByRole('heading', { name: `Run ${correlationId}` }).waitFor();
    // The state badge shows the outcome; a screen reader and its title have the whole state.
    const badge = page.locator('dl.facts .badge');
    await textOf(badge).toBe('ended: completed');
    expect(await visibleText(badge)).toBe('completed');
    expect(await badge.getAttribute('title')).toBe('ended: completed');

    await goHash(page, `${HASH}/s/once`);
    const alert = page.getByRole('alert');
    await textOf(alert).toContain(`was a one-shot: it fired at`);
    await textOf(alert).toContain(`(run ${correlationId})`);
    await alert.getByRole('link', { name: 'Open the trash' }).click();
    await page.getByRole('heading', { name: /Trash/ }).waitFor();
    await textOf(page.locator('main')).toContain('once.yaml');
  });
});
