import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/context.js';
import { applyAgentCallback } from '../../src/service/agent-callbacks.js';
import { fireScheduler } from '../../src/service/runs.js';
import type { Run } from '../../src/store/runs.js';
import { agentHarness } from '../support/agent-harness.js';
import { DIALECTS } from '../support/dialects.js';
import type { TestRuntime } from '../support/runtime.js';

// Issue #25 items 6 and 8: an agent run meets the overlap policy and the run budget as any run —
// a blocked run (waiting for its user's answer) is active, and every agent run counts.

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const runOf = async (rt: Runtime, id: string) => (await rt.repos.runs.get(id)) as Run;

describe.each(DIALECTS)('agent runs and the run policies on %s (issue #25)', (dialect) => {
  it('skips a fire while the agent run is blocked on a question (overlap skip): a blocked run is active', async () => {
    const h = await agentHarness(dialect, 'overlap: skip\n');
    t = h.t;
    const first = await h.handOff();
    await applyAgentCallback(h.rtA, first.correlationId, first.credential, {
      kind: 'status',
      body: { attempt: 1, fencingToken: first.fencingToken, status: 'blocked', question: 'Which branch?' },
    });
    const { correlationId } = await fireScheduler(h.rtA, 'acme', 'ops', 'job');
    await h.a.reap();
    await h.a.executor.settled();
    const second = await runOf(h.rtA, correlationId);
    expect([second.state, second.outcome]).toEqual(['skipped', 'skipped_overlap']);
    expect(h.service.received).toHaveLength(1);
    expect((await runOf(h.rtA, first.correlationId)).state).toBe('started');
  });

  it('counts agent runs against the project run budget: over it, the next fire is skipped_budget and never delivered', async () => {
    const h = await agentHarness(dialect, '', { budget: { runsPerHour: 1, runsPerDay: undefined } });
    t = h.t;
    const first = await h.handOff();
    await applyAgentCallback(h.rtA, first.correlationId, first.credential, {
      kind: 'complete',
      body: { attempt: 1, fencingToken: first.fencingToken, status: 'done' },
    });
    expect((await runOf(h.rtA, first.correlationId)).outcome).toBe('completed');
    const { correlationId } = await fireScheduler(h.rtA, 'acme', 'ops', 'job');
    await h.a.reap();
    await h.a.executor.settled();
    const second = await runOf(h.rtA, correlationId);
    expect([second.state, second.outcome]).toEqual(['skipped', 'skipped_budget']);
    expect(h.service.received).toHaveLength(1);
  });
});
