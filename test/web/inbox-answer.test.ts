import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { timeZone } from '../../src/cron/index.js';
import { formatZoned } from '../../src/time/instant.js';
import { type AgentService, startAgentService } from '../support/agent-service.js';
import { launch } from './browser.js';
import { countOf, signIn, textOf, WAIT } from './page.js';
import { answerOverRest, ask, askingScheduler, type InboxJson, inboxOf } from './questions.js';
import { eventually, type Served, serve } from './server.js';

// Issue #25 item 6: an agent run's question answered in the editor's inbox, in Debian's Chromium
// against a real `ursa serve` whose agent runs go to the reference agent service.

/** Two lines, and markup that must show as the characters it is. */
const QUESTION = 'Which branch should I deploy?\nOptions: <b>main</b> & develop';
const ANSWER = 'main, with care\n<i>not markup</i>';

let served: Served | undefined;
let service: AgentService | undefined;
let context: BrowserContext | undefined;

/** The browser, one server with its agent service and two schedulers that ask, for the file. */
async function start(): Promise<{ served: Served; context: BrowserContext }> {
  if (served !== undefined && context !== undefined) return { served, context };
  context = await launch({ timezoneId: 'Europe/Berlin' });
  served = await serve({ publicUrl: true });
  service = await startAgentService();
  await askingScheduler(served, service, 'acme', 'deploy', QUESTION);
  await askingScheduler(served, service, 'acme', 'ship', 'Ship it today?');
  return { served, context };
}

/** A new tab (its own session storage), signed in, on the inbox of acme. */
async function inboxTab(): Promise<Page> {
  const { served, context } = await start();
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await signIn(page, served, '#/inbox/acme');
  await page.getByRole('heading', { name: 'Inbox (acme)', level: 1 }).waitFor();
  return page;
}

const itemOf = async (s: Served, id: number) =>
  (await inboxOf(s, 'acme')).find((i) => i.id === id) as InboxJson;
const activeId = (page: Page) => page.evaluate("document.activeElement?.id ?? ''") as Promise<string>;

afterAll(async () => {
  await context?.close();
  await service?.close();
  await served?.stop();
});

describe("the inbox answers an agent run's question (issue #25)", () => {
  it('shows the question as literal text with a field and Answer named after it; answering shows who and when, and the run gets it', {
    timeout: 120_000,
  }, async () => {
    const { served: s } = await start();
    const question = await ask(s, 'acme', 'deploy');
    expect(question.body).toBe(QUESTION);
    const page = await inboxTab();
    const item = page.locator('.inbox-items li', { hasText: question.title });
    // The whole question, its lines kept, its markup as text.
    await textOf(item.locator('.question-text')).toBe(QUESTION);
    await countOf(item.locator('.question-text b')).toBe(0);
    await item.getByRole('link', { name: `the run of ${question.title}`, exact: true }).waitFor();
    expect(await item.getByRole('link', { name: `the run of ${question.title}` }).getAttribute('href')).toBe(
      `#/p/acme/ops/s/deploy/run/${question.correlationId}`,
    );

    // Typed, then Answer by keyboard.
    const field = page.getByRole('textbox', { name: `Answer to ${question.title}`, exact: true });
    const answer = page.getByRole('button', { name: `Answer: ${question.title}`, exact: true });
    await field.fill(ANSWER);
    await field.press('Tab');
    await expect.poll(() => answer.evaluate((el) => el === el.ownerDocument.activeElement), WAIT).toBe(true);
    await page.keyboard.press('Enter');
    await textOf(item.getByRole('status')).toBe('Answered as admin.');

    // Recorded as the token's user, and the item read.
    const stored = await eventually(
      async () => {
        const found = await itemOf(s, question.id);
        return found.answeredAt == null ? undefined : found;
      },
      'the answer is recorded',
      15_000,
    );
    expect([stored.answer, stored.answeredBy]).toEqual([ANSWER, 'admin']);
    expect(stored.readAt).toBe(stored.answeredAt);
    // The page says who answered and when (in the browser's zone), shows the answer as text, and
    // the field, Answer and Mark read are gone; the focus is on the answer, not on the page.
    const when = formatZoned(Date.parse(stored.answeredAt as string), timeZone('Europe/Berlin')).slice(4);
    await textOf(item.locator('.answered p.muted')).toBe(`Answered by admin at ${when}:`);
    await textOf(item.locator('.answered .answer-text')).toBe(ANSWER);
    await countOf(item.locator('.answered i')).toBe(0);
    await countOf(field).toBe(0);
    await countOf(answer).toBe(0);
    await countOf(item.getByRole('button', { name: /^Mark read: / })).toBe(0);
    await expect.poll(() => activeId(page), WAIT).toBe(`answered-${question.id}`);

    // A worker's next pass takes the answer to the agent service that asked.
    await eventually(
      async () => {
        const runs = (await (service as AgentService).runs()) as { correlationId: string; answer?: string }[];
        return runs.find((r) => r.correlationId === question.correlationId)?.answer === ANSWER || undefined;
      },
      'the agent service gets the answer',
      30_000,
    );

    // Read again, the answered question shows its answer, who and when, and no form.
    await page.getByRole('checkbox', { name: 'Show read items too' }).check();
    await textOf(item.locator('.answered p.muted')).toBe(`Answered by admin at ${when}:`);
    await textOf(item.locator('.answered .answer-text')).toBe(ANSWER);
    await textOf(item.locator('.question-text')).toBe(QUESTION);
    await countOf(item.getByRole('textbox')).toBe(0);
    await page.close();
  });

  it("says the API's refusal of an empty answer and of a question answered meanwhile, and nothing changes", {
    timeout: 120_000,
  }, async () => {
    const { served: s } = await start();
    const question = await ask(s, 'acme', 'ship');
    const page = await inboxTab();
    const item = page.locator('.inbox-items li', { hasText: question.title });
    const field = page.getByRole('textbox', { name: `Answer to ${question.title}`, exact: true });
    const answer = page.getByRole('button', { name: `Answer: ${question.title}`, exact: true });
    const status = item.getByRole('status');

    // An empty answer: the API's message with the field's path, in the error style; the field
    // is described by it and the focus goes back to Answer.
    await answer.click();
    await textOf(status).toMatch(/^Answering failed: .*body\.answer.* \[VALIDATION_FAILED\]$/);
    expect(await status.getAttribute('class')).toBe('status error');
    expect(await field.getAttribute('aria-describedby')).toBe(await status.getAttribute('id'));
    await expect.poll(() => answer.evaluate((el) => el === el.ownerDocument.activeElement), WAIT).toBe(true);
    expect((await itemOf(s, question.id)).answeredAt).toBeNull();

    // Answered over REST (as from another tab) while this page still shows the form.
    const first = await answerOverRest(s, 'acme', question.id, 'tomorrow');
    expect(first.status).toBe(200);
    const { answeredAt } = (await first.json()) as { answeredAt: string };
    await field.fill('today');
    await answer.click();
    await textOf(status).toBe(
      `Answering failed: inbox item ${question.id} was answered already, by admin at ${answeredAt} [CONFLICT]`,
    );
    expect(await status.getAttribute('class')).toBe('status error');
    await expect.poll(() => answer.evaluate((el) => el === el.ownerDocument.activeElement), WAIT).toBe(true);
    // Nothing changed: the first answer stands, and the page kept what was typed.
    const stored = await itemOf(s, question.id);
    expect([stored.answer, stored.answeredBy, stored.answeredAt]).toEqual(['tomorrow', 'admin', answeredAt]);
    expect(await field.inputValue()).toBe('today');
    await page.close();
  });
});
