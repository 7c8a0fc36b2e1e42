import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launch } from './browser.js';
import { call, signIn, textOf, ursaOn } from './page.js';
import { type Served, serve } from './server.js';

// issue #23 item 3: times in the user's zone — their display.timezone, else the browser's — with a
// UTC toggle. The browser here is in Berlin; the user's display zone is Tokyo.

const P = '/brain/acme/project/ops';
const JOB = 'description: daily\ncron: "0 0 9 * * *"\ntimezone: UTC\nrecipe: noop\n';

let served: Served | undefined;
let context: BrowserContext | undefined;

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
    const page: Page = await context.newPage();
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
    await page.getByRole('button', { name: 'UTC' }).click();
    await textOf(page.locator('#zone-now')).toBe('Times in UTC');
    await textOf(page.locator('main')).toContain('09:00:00Z');
  });
});
