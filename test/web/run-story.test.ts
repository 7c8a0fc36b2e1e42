import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { SLEEPY } from './a11y.js';
import { launch } from './browser.js';
import { apply, call, countOf, goHash, signIn, textOf, visibleText, WAIT } from './page.js';
import { eventually, type Served, serve } from './server.js';

// issue #23, a newcomer's findings: Fire says what the lane did with the run (the sentence of
// `ursa fire`); the run history links waiting and folded runs, with a short state badge, and
// its columns fit at 1280 px and 420 px; a process's page has Stop and follows the process.

const P = '/brain/acme/project/ops';
const HASH = '#/p/acme/ops';
/** A sleeping shell on the queue policy: a second fire waits behind it, a third folds into the second. */
const QUEUER =
  'description: Runs one at a time\ncron: "0 0 0 1 1 *"\ntimezone: UTC\nrecipe: sleepy\noverlap: queue\n';
const RUN = 'run_[0-9a-f-]{36}';
/** A wait for the server's worker (a process starting or stopping). */
const SLOW = { ...WAIT, timeout: 30_000 };

let served: Served | undefined;
let context: BrowserContext | undefined;
let page: Page;

/** The three runs of the lane: started, waiting behind it, folded into the waiting one. */
interface Lane {
  readonly started: string;
  readonly waiting: string;
  readonly folded: string;
}
let lane: Lane | undefined;

interface RunRow {
  readonly correlationId: string;
  readonly state: string;
  readonly outcome: string;
  readonly processId: string | null;
  readonly sessionId: string | null;
  readonly endedAt: string | null;
  readonly foldedInto: string | null;
  readonly waitingBehind: string | null;
}

const runOf = async (id: string) =>
  (await (await call(served as Served, 'GET', `${P}/runs/${id}`)).json()) as RunRow;
const processOf = async (id: string) =>
  (await (await call(served as Served, 'GET', `${P}/processes/${id}`)).json()) as { status: string };

async function start(): Promise<Served> {
  if (served !== undefined) return served;
  context = await launch({ timezoneId: 'Europe/Paris' });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  served = await serve();
  await apply(served, 'acme', 'ops', { '_vance/recipes/sleepy.yaml': SLEEPY });
  expect((await call(served, 'PUT', `${P}/scheduler/queuer`, QUEUER)).status).toBe(201);
  await signIn(page, served, `${HASH}/s/queuer`);
  return served;
}

/** The lane of three runs, fired over REST when the Fire test did not make it. */
async function theLane(s: Served): Promise<Lane> {
  if (lane !== undefined) return lane;
  const fire = async () =>
    ((await (await call(s, 'POST', `${P}/scheduler/queuer/fire`)).json()) as { correlationId: string })
      .correlationId;
  const started = await fire();
  await expect.poll(async () => (await runOf(started)).processId, SLOW).not.toBeNull();
  const waiting = await fire();
  await expect.poll(async () => (await runOf(waiting)).waitingBehind, SLOW).toBe(started);
  const folded = await fire();
  await expect.poll(async () => (await runOf(folded)).foldedInto, SLOW).toBe(waiting);
  lane = { started, waiting, folded };
  return lane;
}

/** Stops every run of queuer until none is left to start (the waiting one starts when the first ends). */
async function endLane(s: Served): Promise<void> {
  await eventually(
    async () => {
      const { runs } = (await (await call(s, 'GET', `${P}/scheduler/queuer/runs`)).json()) as {
        runs: RunRow[];
      };
      const open = runs.filter((r) => r.endedAt === null && r.state !== 'skipped');
      for (const r of open) {
        if (r.processId !== null)
          await call(s, 'POST', `${P}/processes/${r.processId}/stop`, { reason: 'test' });
      }
      return open.length === 0 ? true : undefined;
    },
    'every run of queuer ended',
    60_000,
  );
}

afterAll(async () => {
  await context?.close();
  if (served !== undefined) await endLane(served);
  await served?.stop();
});

/** Confirms Fire now… on the open editor; the status line once Fire says what happened. */
async function fireFromEditor(): Promise<string> {
  const status = page.getByRole('status').first();
  const before = (await status.textContent()) ?? '';
  await page.getByRole('button', { name: 'Fire now…' }).click();
  await page.getByRole('dialog', { name: 'Fire queuer now?' }).getByRole('button', { name: 'Fire' }).click();
  await expect.poll(async () => (await status.textContent()) ?? '', SLOW).not.toBe(before);
  return (await status.textContent()) ?? '';
}

describe('runs that tell their story in the editor (issue #23)', () => {
  it("says after Fire what the lane did, in ursa fire's words: started, waits behind the active run, folded into the waiting one", {
    timeout: 120_000,
  }, async () => {
    await start();
    await page.getByRole('heading', { name: 'queuer', level: 1 }).waitFor();
    const first = await fireFromEditor();
    expect(first).toMatch(
      new RegExp(`^Fired queuer: ${RUN} started \\(process proc_\\S+\\)\\. Open the run$`),
    );
    const started = new RegExp(RUN).exec(first)?.[0] as string;
    expect((await runOf(started)).state).toBe('running');

    const second = await fireFromEditor();
    const waiting = new RegExp(RUN).exec(second)?.[0] as string;
    expect(second).toBe(
      `Fired queuer: ${waiting} waits behind ${started}, the active run, and starts when that one ends. Open the run`,
    );

    const third = await fireFromEditor();
    expect(third).toBe(
      `Fired queuer: folded into ${waiting}, which already waits for its turn; this fire adds no run. Open the run`,
    );
    // The link opens the fired run: the one that was folded.
    const folded = /#\/p\/acme\/ops\/s\/queuer\/run\/(run_[0-9a-f-]{36})$/.exec(
      (await page.getByRole('link', { name: 'Open the run' }).getAttribute('href')) ?? '',
    )?.[1] as string;
    expect((await runOf(folded)).foldedInto).toBe(waiting);
    lane = { started, waiting, folded };
  });

  it('has Stop on a process page while the process is active, and follows it until it ended', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    const { started } = await theLane(s);
    const { processId, sessionId } = await runOf(started);
    // Its session's page lists it with Stop too.
    await goHash(page, `${HASH}/s/queuer/session/${sessionId}`);
    const listed = page.locator('main li', { hasText: processId as string });
    await listed.getByRole('button', { name: 'Stop…' }).waitFor();
    await listed.getByRole('link', { name: processId as string }).click();
    await page.getByRole('heading', { name: `Process ${processId}` }).waitFor();
    const status = page.locator('dl.facts dd').first();
    await textOf(status).toMatch(/^running/);
    await page.getByRole('button', { name: 'Stop…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop this run?' });
    await textOf(dialog).toContain(`run ${started} ends cancelled`);
    await dialog.getByRole('button', { name: 'Stop run' }).click();
    // The page asks again by itself: the process's end shows, Stop leaves, and the end is announced.
    const ended = await eventually(
      async () => {
        const p = await processOf(processId as string);
        return p.status === 'running' ? undefined : p.status;
      },
      'the process ends',
      30_000,
    );
    await textOf(page.locator('#process-end')).toBe(`Process ${processId} ended: ${ended}`);
    await textOf(status).toMatch(new RegExp(`^${ended}`));
    await countOf(page.getByRole('button', { name: 'Stop…' })).toBe(0);
    await expect.poll(async () => (await runOf(started)).outcome, SLOW).toBe('cancelled');
  });

  it('asks for an open process every 2 s while it is active, and no more once it ended or the page is left', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    const { waiting } = await theLane(s);
    // The waiting run starts once the first one ended.
    const processId = await eventually(
      async () => {
        const run = await runOf(waiting);
        return run.state === 'running' && run.processId !== null ? run.processId : undefined;
      },
      'the waiting run starts',
      30_000,
    );
    // The fake clock is the browser context's: a browser of its own, so no other page gets it.
    const own = await launch({ timezoneId: 'Europe/Paris' });
    try {
      const clocked = await own.newPage();
      await clocked.clock.install();
      await signIn(clocked, s, HASH);
      const asked: string[] = [];
      clocked.on('request', (request) => {
        if (request.url().includes(`/processes/${processId}`)) asked.push(request.url());
      });
      await goHash(clocked, `${HASH}/s/queuer/process/${processId}`);
      await textOf(clocked.locator('dl.facts dd').first()).toMatch(/^running/);
      await clocked.clock.pauseAt(Date.now() + 500);
      const first = asked.length;
      await clocked.clock.runFor(6_000);
      await expect.poll(() => asked.length, WAIT).toBe(first + 3);
      // Leaving the page ends the asking.
      await goHash(clocked, HASH);
      await clocked.getByRole('heading', { name: 'Schedulers of acme/ops' }).waitFor();
      const left = asked.length;
      await clocked.clock.runFor(10_000);
      expect(asked.length).toBe(left);
      // An ended process is asked for once.
      await call(s, 'POST', `${P}/processes/${processId}/stop`, { reason: 'test' });
      await expect.poll(async () => (await processOf(processId)).status, SLOW).not.toBe('running');
      await goHash(clocked, `${HASH}/s/queuer/process/${processId}`);
      // The page's effects wait for an animation frame: the paused clock moves on a little at a time.
      await expect
        .poll(async () => {
          await clocked.clock.runFor(50);
          return clocked.locator('#process-end').textContent();
        }, WAIT)
        .toMatch(/ended: /);
      const ended = asked.length;
      await clocked.clock.runFor(10_000);
      expect(asked.length).toBe(ended);
    } finally {
      await own.close();
    }
  });

  it('links waiting and folded runs in the run history, with short state badges, every column heading whole at 1280 px and 420 px', {
    timeout: 120_000,
  }, async () => {
    const s = await start();
    const { started, waiting, folded } = await theLane(s);
    await endLane(s);
    await page.setViewportSize({ width: 1280, height: 900 });
    await goHash(page, `${HASH}/s/queuer`);
    // The run history is a snapshot: read it again (the page may have shown it before the lane).
    await page.locator('.history').getByRole('button', { name: 'Refresh' }).click();
    const row = (id: string) => page.locator(`.history tr[data-run="${id}"]`);
    await row(folded).waitFor();
    const short = (id: string) => id.slice(0, 12);
    const links = (id: string) => row(id).locator('td.links');
    await textOf(links(waiting)).toBe(`waited behind ${short(started)}1 folded in`);
    await textOf(links(folded)).toBe(`folded into ${short(waiting)}`);
    await textOf(links(started)).toBe('');
    const behind = links(waiting).getByRole('link', { name: short(started) });
    expect(await behind.getAttribute('title')).toBe(started);
    expect(await behind.getAttribute('href')).toBe(`${HASH}/s/queuer/run/${started}`);
    expect(await links(folded).getByRole('link').getAttribute('href')).toBe(
      `${HASH}/s/queuer/run/${waiting}`,
    );

    // The badge shows one word; a screen reader (and its title) has the whole state.
    const badge = (id: string): Locator => row(id).locator('.badge');
    await textOf(badge(started)).toBe('ended: cancelled');
    expect(await visibleText(badge(started))).toBe('cancelled');
    expect(await badge(started).getAttribute('title')).toBe('ended: cancelled');
    expect(await visibleText(badge(folded))).toBe('skipped');
    await textOf(badge(folded)).toBe('skipped: skipped_overlap_queued');
    expect(
      await row(folded)
        .getByRole('link', { name: `Run ${folded}: skipped: skipped_overlap_queued` })
        .count(),
    ).toBe(1);

    // Every column heading shows whole, and at 1280 px the whole table is in view.
    const table = page.locator('.history .table-wrap');
    const layout = () =>
      table.evaluate((wrap) => {
        const box = wrap.getBoundingClientRect();
        return {
          headings: [...wrap.querySelectorAll('thead th')].map((th) => th.textContent),
          cut: [...wrap.querySelectorAll('thead th')]
            .filter(
              (th) => th.scrollWidth > th.clientWidth || th.getBoundingClientRect().right > box.right + 0.5,
            )
            .map((th) => th.textContent),
          fits: wrap.scrollWidth <= wrap.clientWidth,
          page: wrap.ownerDocument.documentElement.scrollWidth,
        };
      });
    const headings = [
      'State',
      'Trigger',
      'Scheduled for',
      'Started late by',
      'Duration',
      'Coalesced',
      'Linked runs',
    ];
    await expect.poll(layout, WAIT).toEqual({ headings, cut: [], fits: true, page: 1280 });
    // At 420 px the table scrolls in its own box, the page does not; no heading is cut in its cell.
    await page.setViewportSize({ width: 420, height: 800 });
    const at420 = () =>
      table.evaluate((wrap) => ({
        cut: [...wrap.querySelectorAll('thead th')]
          .filter((th) => th.scrollWidth > th.clientWidth)
          .map((th) => th.textContent),
        page: wrap.ownerDocument.documentElement.scrollWidth,
      }));
    await expect.poll(at420, WAIT).toEqual({ cut: [], page: 420 });
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
