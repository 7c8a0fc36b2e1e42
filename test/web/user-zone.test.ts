import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launch } from './browser.js';
import { call, goHash, signIn, textOf, ursaOn } from './page.js';
import { type Served, serve } from './server.js';

// issue #23 item 3: times in the user's zone — their display.timezone, else the browser's — with a
// UTC toggle that names both; the backfill dialog's range in that zone (a newcomer's finding).
// The browser here is in Berlin; the user's display zone is Tokyo.

const P = '/brain/acme/project/ops';
const DAY_MS = 86_400_000;
const JOB = 'description: daily\ncron: "0 0 9 * * *"\ntimezone: UTC\nrecipe: noop\n';

let served: Served | undefined;
let context: BrowserContext | undefined;
/** The signed-in tab of the first test, the user's zone Tokyo. */
let page: Page;

afterAll(async () => {
  await context?.close();
  await served?.stop();
});

describe("the editor's zone (issue #23)", () => {
  it("shows times in the user's display zone when one is set, else the browser's, and UTC on request", {
    timeout: 90_000,
  }, async () => {
    served = await serve();
    context = await launch({ timezoneId: 'Europe/Berlin' });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    expect((await call(served, 'PUT', `${P}/scheduler/job`, JOB)).status).toBe(201);
    const me = (await (await call(served, 'GET', `${P}/me`)).json()) as {
      user: string;
      displayTimezone: { value: string; from: string };
    };
    expect(me.displayTimezone).toEqual({ value: 'UTC', from: 'default' });

    // Nothing set: the browser's zone.
    await signIn(page, served, '#/p/acme/ops');
    await textOf(page.locator('#zone-now')).toBe('Times in Europe/Berlin');

    await ursaOn(served, [
      'settings',
      'set',
      'user',
      me.user,
      'display.timezone',
      'Asia/Tokyo',
      '--tenant',
      'acme',
    ]);
    await page.reload();
    await textOf(page.locator('#zone-now')).toBe('Times in Asia/Tokyo');
    // 09:00 UTC is 18:00 in Tokyo.
    await textOf(page.locator('main')).toContain('18:00:00 +09:00');
    // The toggle says which zone is shown and which one a press shows.
    const toggle = page.getByRole('button', { name: 'Times in Asia/Tokyo · show UTC' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    await textOf(page.locator('#zone-now')).toBe('Times in UTC');
    const back = page.getByRole('button', { name: 'Times in UTC · show Asia/Tokyo' });
    expect(await back.getAttribute('aria-pressed')).toBe('true');
    await textOf(page.locator('main')).toContain('09:00:00Z');
    await back.click();
    await textOf(page.locator('#zone-now')).toBe('Times in Asia/Tokyo');
  });

  it('prefills and reads the backfill range in the zone shown, and sends UTC instants', {
    timeout: 90_000,
  }, async () => {
    const s = served as Served;
    await goHash(page, '#/p/acme/ops/s/job');
    await page.getByRole('heading', { name: 'job', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Backfill…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Backfill job?' });
    await textOf(dialog.locator('#backfill-zone')).toBe(
      'Times in Asia/Tokyo, the zone the editor shows; one with Z or an offset is taken as it is.',
    );
    // Prefilled with a day until now, as Tokyo's wall times.
    const from = dialog.getByLabel('From (oldest occurrence)');
    const to = dialog.getByLabel('To (newest occurrence, not later than now)');
    const inTokyo = (wall: string) => Date.parse(`${wall.replace(' ', 'T')}+09:00`);
    const now = Date.now();
    expect(Math.abs(inTokyo(await from.inputValue()) - (now - DAY_MS))).toBeLessThan(60_000);
    expect(Math.abs(inTokyo(await to.inputValue()) - now)).toBeLessThan(60_000);
    expect(await from.getAttribute('aria-describedby')).toBe('backfill-zone');

    // Not a date-time: said in the dialog, and nothing is sent.
    await from.fill('yesterday');
    await dialog.getByRole('button', { name: 'Backfill' }).click();
    await textOf(dialog.getByRole('alert')).toBe(
      'From: not a date-time: write 2026-05-14 08:00:00 (read in Asia/Tokyo), or an instant with Z or an offset',
    );
    expect(await from.getAttribute('aria-invalid')).toBe('true');

    // Three days ago at 18:00 in Tokyo is its 09:00 UTC occurrence: exactly one, sent as UTC.
    const day = new Date(now - 3 * DAY_MS).toISOString().slice(0, 10);
    await from.fill(`${day} 18:00:00`);
    await to.fill(`${day} 18:00`);
    const sent: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/scheduler/job/backfill')) sent.push(request.postDataJSON());
    });
    await dialog.getByRole('button', { name: 'Backfill' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await textOf(page.getByRole('status').first()).toBe(
      `Backfill of job: 1 occurrences from ${day} 18:00:00 +09:00 to ${day} 18:00:00 +09:00, 1 queued.`,
    );
    expect(sent).toEqual([{ from: `${day}T09:00:00Z`, to: `${day}T09:00:00Z` }]);
    const { runs } = (await (await call(s, 'GET', `${P}/scheduler/job/runs`)).json()) as {
      runs: { trigger: string; scheduledFor: string }[];
    };
    expect(runs.filter((r) => r.trigger === 'backfill').map((r) => r.scheduledFor)).toEqual([
      `${day}T09:00:00Z`,
    ]);
  });
});
