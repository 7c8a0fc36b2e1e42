import { describe, expect, it } from 'vitest';
import { startRefusal } from '../../src/decisions/start-refusal.js';

// Spec §4.2, §10a (issue #20): what refuses a start before anything is started.
describe('startRefusal', () => {
  const recipe = { kind: 'recipe', recipe: 'r' } as const;
  const workflow = { kind: 'workflow', workflow: 'w' } as const;

  it('refuses a workflow target while workflows are switched off, and only then', () => {
    expect(startRefusal(workflow, { workflowsEnabled: false })).toBe(
      'workflows are switched off by the operator (workflows: false)',
    );
    expect(startRefusal(workflow, { workflowsEnabled: true })).toBeUndefined();
  });

  it('refuses a recipe whose engine is not registered, and only then', () => {
    expect(
      startRefusal(recipe, { workflowsEnabled: true, engine: { name: 'custom', registered: false } }),
    ).toBe('engine "custom" is not registered');
    expect(
      startRefusal(recipe, { workflowsEnabled: false, engine: { name: 'shell', registered: true } }),
    ).toBeUndefined();
  });
});
