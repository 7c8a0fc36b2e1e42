import { afterEach, describe, expect, it } from 'vitest';
import {
  lastRunSchema,
  recipeDetailSchema,
  recipeSummarySchema,
  schedulerSummarySchema,
} from '../../src/contract/index.js';
import { setScheduler } from '../../src/service/schedulers.js';
import { type AgentIdentity, callTool, TOOLS } from '../../src/tools/toolset.js';
import { type TestRuntime, testRuntime } from '../support/runtime.js';

// The agent tools name a field as the REST contract does (issue #21 item 4): `nextRunAt`, not
// `nextRun`; `cron` and `at` are null when the trigger is the other one, as in `GET …/scheduler`.

const T = 'acme';
const P = 'ops';
const agent: AgentIdentity = { tenant: T, project: P, user: 'mia' };
const tool = (name: string) => TOOLS.find((t) => t.name === name);

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('agent tools and the REST contract', () => {
  it("scheduler_list's fields are the REST listing's, by name, besides `locked`", () => {
    const listed = tool('scheduler_list')?.output.shape.schedulers;
    const item = (listed as unknown as { element: typeof schedulerSummarySchema }).element;
    const rest = Object.keys(schedulerSummarySchema.shape);
    expect(Object.keys(item.shape).filter((key) => !rest.includes(key))).toEqual(['locked']);
    const lastRun = Object.keys(lastRunSchema.shape);
    expect(Object.keys(item.shape.lastRun.unwrap().shape).every((key) => lastRun.includes(key))).toBe(true);
  });

  it("recipe_list's and recipe_get's fields are the REST answers', by name (issue #23)", () => {
    const listed = tool('recipe_list')?.output.shape.recipes;
    const item = (listed as unknown as { element: typeof recipeSummarySchema }).element;
    const rest = Object.keys(recipeSummarySchema.shape);
    expect(Object.keys(item.shape).filter((key) => !rest.includes(key))).toEqual([]);
    const detail = Object.keys(recipeDetailSchema.shape);
    const got = Object.keys(tool('recipe_get')?.output.shape ?? {});
    expect(got.filter((key) => !detail.includes(key))).toEqual([]);
    expect(got).toContain('yaml');
  });

  it('scheduler_list answers nextRunAt, with cron or at and the other null', async () => {
    t = await testRuntime('2026-06-01T08:00:00Z');
    const ada = { tenant: T, project: P, user: 'ada', role: 'admin' as const };
    await setScheduler(
      t.rt,
      ada,
      'nightly',
      'description: n\ncron: "0 0 3 * * *"\ntimezone: UTC\nrecipe: noop\n',
    );
    await setScheduler(
      t.rt,
      ada,
      'once',
      'description: o\nat: "2026-07-01T09:00:00"\ntimezone: UTC\nrecipe: noop\n',
    );
    const result = await callTool(t.rt, agent, TOOLS, 'scheduler_list', {});
    expect(result).toEqual({
      ok: true,
      output: {
        schedulers: [
          {
            name: 'nightly',
            description: 'n',
            cron: '0 0 3 * * *',
            at: null,
            timezone: 'UTC',
            enabled: true,
            lastRun: null,
            nextRunAt: '2026-06-02T03:00:00Z',
            paused: null,
          },
          {
            name: 'once',
            description: 'o',
            cron: null,
            at: '2026-07-01T09:00:00',
            timezone: 'UTC',
            enabled: true,
            lastRun: null,
            nextRunAt: '2026-07-01T09:00:00Z',
            paused: null,
          },
        ],
      },
    });
  });
});
