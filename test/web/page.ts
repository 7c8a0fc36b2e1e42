import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { BIN, ENV } from '../support/server.js';
import type { Served } from './server.js';

/**
 * Helpers of the editor's Chromium tests (issue #23): bounded waits on the page, screenshots for
 * the docs on request, REST calls and `ursa apply` against the served store.
 */

/** Every assertion on the page waits for the page to get there (polling its state), bounded. */
export const WAIT = { timeout: 15_000, interval: 50 };

export function textOf(locator: Locator): ReturnType<typeof expect.poll<Promise<string>>> {
  return expect.poll(async () => (await locator.allTextContents()).join('\n'), WAIT);
}

export function countOf(locator: Locator): ReturnType<typeof expect.poll<Promise<number>>> {
  return expect.poll(() => locator.count(), WAIT);
}

/**
 * Where screenshots go: docs/screenshots with URSA_SCREENSHOTS=1 (so a plain test run leaves the
 * working tree as it found it), else a temporary folder.
 */
export function shotsFolder(): string {
  const dir =
    process.env.URSA_SCREENSHOTS === '1'
      ? resolve(import.meta.dirname, '../../docs/screenshots')
      : mkdtempSync(join(tmpdir(), 'ursa-shots-'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A REST call with the admin token; a string body is YAML, anything else JSON. */
export function call(served: Served, method: string, path: string, body?: unknown): Promise<Response> {
  const type = typeof body === 'string' ? 'application/yaml' : 'application/json';
  return fetch(`${served.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${served.token}`,
      ...(body === undefined ? {} : { 'content-type': type }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/**
 * Writes `files` (path under the project → text) with `ursa apply` into tenant/project of the
 * served SQLite store (REST has no route for recipes here).
 *
 * @throws Error with the command's output when it exits non-zero.
 */
export async function apply(
  served: Served,
  tenant: string,
  project: string,
  files: Readonly<Record<string, string>>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ursa-apply-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  await ursaOn(served, ['apply', dir, '--tenant', tenant, '--project', project]);
}

/**
 * Runs the built `ursa <args> --db <the served store>` (a local command beside the server).
 *
 * @throws Error with the command's output when it exits non-zero.
 */
export async function ursaOn(served: Served, args: readonly string[]): Promise<void> {
  const child = spawn(process.execPath, [BIN, ...args, '--db', join(served.dir, 'ursa.db')], {
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`ursa ${args[0]} exited ${code}: ${output}`);
}

/** Signs in with the admin token and opens `hash` (e.g. `#/p/acme/ops/s/job`). */
export async function signIn(page: Page, served: Served, hash: string): Promise<void> {
  await page.goto(`${served.url}/${hash}`);
  const field = page.getByLabel('API token');
  await field.fill(served.token);
  await field.press('Enter');
  await page.locator('header.top').waitFor();
}

/** The text of the element that has the focus. */
export function focused(page: Page): Promise<string> {
  return page.evaluate("document.activeElement?.textContent?.trim() ?? ''");
}

/** Moves the page to `hash` in place, as an in-app link does (no reload). */
export async function goHash(page: Page, hash: string): Promise<void> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
}

/** A run as GET …/runs/:correlationId answers it. */
export interface RunJson {
  readonly outcome: string;
  readonly processId: string | null;
  readonly log: string;
}

export async function runOf(served: Served, tenant: string, project: string, id: string): Promise<RunJson> {
  return (await (
    await call(served, 'GET', `/brain/${tenant}/project/${project}/runs/${id}`)
  ).json()) as RunJson;
}

/**
 * The text a sighted reader sees in `locator`: its text without the screen-reader-only parts
 * (`.sr-only`), e.g. a run's state badge shows `completed` where a screen reader says `ended:
 * completed`.
 */
export function visibleText(locator: Locator): Promise<string> {
  return locator.evaluate((el) => {
    const copy = el.cloneNode(true) as typeof el;
    for (const hidden of copy.querySelectorAll('.sr-only')) hidden.remove();
    return (copy.textContent ?? '').trim();
  });
}
