import { existsSync } from 'node:fs';
import { type BrowserContext, chromium } from 'playwright-core';
import { tempDir } from '../support/temp.js';

/** Debian's Chromium; the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A fresh Chromium profile (its own temporary user-data-dir, removed after the test file) driven
 * by playwright-core. `bypassCSP` lets a test inject a script of its own (axe-core) into the page,
 * whose Content-Security-Policy allows only the page's own scripts.
 *
 * @throws Error when /usr/bin/chromium is missing: the browser tests fail, they are not skipped.
 */
export async function launch(options: { timezoneId: string; bypassCSP?: boolean }): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get update && apt-get install -y chromium). ` +
        'The web tests drive that browser and never download one; .ci/run installs it.',
    );
  }
  const profile = tempDir('ursa-chromium-');
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    timezoneId: options.timezoneId,
    locale: 'en-GB',
    bypassCSP: options.bypassCSP ?? false,
  });
}
