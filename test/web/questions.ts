import { expect } from 'vitest';
import type { AgentService } from '../support/agent-service.js';
import { call } from './page.js';
import { eventually, type Served } from './server.js';

/**
 * Questions of agent runs in the inbox for the editor's tests (issue #25), asked as a user meets
 * them: the reference agent service of examples/agent-service/ runs an `agent` recipe, blocks
 * after its first step with the scheduler's question, and waits for the answer; the question is an
 * item of the scheduler's `runAs` user's inbox (the admin's here).
 */

/** An inbox item as GET /brain/:tenant/inbox answers it, with a question's answer fields. */
export interface InboxJson {
  readonly id: number;
  readonly kind: string;
  readonly title: string;
  readonly body: string;
  readonly correlationId: string | null;
  readonly readAt: string | null;
  readonly answer?: string | null;
  readonly answeredBy?: string | null;
  readonly answeredAt?: string | null;
}

/** Every item of the admin's inbox in `tenant`, read ones too, newest first. */
export async function inboxOf(served: Served, tenant: string): Promise<InboxJson[]> {
  const response = await call(served, 'GET', `/brain/${tenant}/inbox?all=true&limit=100`);
  return ((await response.json()) as { items: InboxJson[] }).items;
}

/**
 * Writes the recipe `agent` (POSTing to `service`) into `tenant`/ops, and a scheduler `name` that
 * fires only by hand and asks `question`; after the answer its run works on for about ten minutes
 * (a step a second), so it stays active while a test answers it again.
 */
export async function askingScheduler(
  served: Served,
  service: AgentService,
  tenant: string,
  name: string,
  question: string,
): Promise<void> {
  const project = `/brain/${tenant}/project/ops`;
  const recipe = `description: an agent run\nengine: agent\nurl: ${service.origin}/runs\nheartbeatTimeout: PT1M\n`;
  const put = await call(served, 'PUT', `${project}/recipes/agent`, { yaml: recipe });
  expect([200, 201]).toContain(put.status);
  const scheduler = [
    `description: Asks its user a question`,
    'cron: "0 0 0 1 1 *"',
    'timezone: UTC',
    'recipe: agent',
    'params:',
    `  question: ${JSON.stringify(question)}`,
    '  steps: 600',
    '  stepMs: 1000',
    '  heartbeatMs: 1000',
    '',
  ].join('\n');
  expect((await call(served, 'PUT', `${project}/scheduler/${name}`, scheduler)).status).toBe(201);
}

/** Fires `name` of `tenant`/ops over REST; its question's inbox item once the service asked it. */
export async function ask(served: Served, tenant: string, name: string): Promise<InboxJson> {
  const fired = await call(served, 'POST', `/brain/${tenant}/project/ops/scheduler/${name}/fire`);
  expect(fired.status).toBe(202);
  const { correlationId } = (await fired.json()) as { correlationId: string };
  return eventually(
    async () =>
      (await inboxOf(served, tenant)).find((i) => i.kind === 'question' && i.correlationId === correlationId),
    `the question of ${name}'s run reaches the inbox`,
    30_000,
  );
}

/** Answers item `id` of the admin's inbox in `tenant` over REST; the response. */
export function answerOverRest(
  served: Served,
  tenant: string,
  id: number,
  answer: string,
): Promise<Response> {
  return call(served, 'POST', `/brain/${tenant}/inbox/${id}/answer`, { answer });
}
