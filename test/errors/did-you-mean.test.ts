import { describe, expect, it } from 'vitest';
import { closestName, didYouMean, editDistance } from '../../src/errors/did-you-mean.js';
import type { UrsaError } from '../../src/errors/index.js';
import { parseRecipeDocument } from '../../src/recipes/parse.js';
import { parseSchedulerDocument } from '../../src/scheduler/document.js';
import { parseWorkflowDocument } from '../../src/workflows/parse.js';

// issue #23: "did you mean" for a near-miss field of a scheduler, recipe or workflow document.
describe('did you mean', () => {
  it.each([
    ['timezon', 'timezone', 1],
    ['crno', 'cron', 1],
    ['recipie', 'recipe', 1],
    ['descripton', 'description', 1],
    ['abc', 'xyz', 3],
  ])('%s to %s: %d edit(s)', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });

  it('names the closest candidate within reach, none for a word far from all', () => {
    expect(closestName('timezon', ['cron', 'timezone', 'at'])).toBe('timezone');
    expect(closestName('TimeZone', ['cron', 'timezone'])).toBe('timezone');
    expect(closestName('schedule', ['cron', 'timezone'])).toBeNull();
    expect(closestName('x', ['at'])).toBeNull();
    expect(didYouMean('overlp', ['overlap'])).toBe(' (did you mean "overlap"?)');
    expect(didYouMean('colour', ['overlap'])).toBe('');
  });
});

const refusal = (run: () => unknown): UrsaError => {
  try {
    run();
  } catch (error) {
    return error as UrsaError;
  }
  throw new Error('not refused');
};

describe('an unknown field of a document', () => {
  it('of a scheduler suggests the field it likely is', () => {
    const error = refusal(() =>
      parseSchedulerDocument('description: d\ncron: "@daily"\ntimezon: UTC\nrecipe: noop\n', {
        name: 'job',
        path: 'p.yaml',
      }),
    );
    expect(error.issues?.[0]?.path).toBe('timezon');
    expect(error.issues?.[0]?.message).toMatch(
      /^unknown field \(did you mean "timezone"\?\); the fields are /,
    );
  });

  it('of a nested mapping names the fields there, not the top-level ones', () => {
    const error = refusal(() =>
      parseSchedulerDocument('description: d\ncron: "@daily"\nrecipe: noop\nretry:\n  attemps: 3\n', {
        name: 'job',
        path: 'p.yaml',
      }),
    );
    expect(error.issues).toContainEqual({
      path: 'retry.attemps',
      message: 'unknown field (did you mean "attempts"?); the fields are attempts, backoff',
    });
  });

  it('of a recipe and of a workflow step suggests the field it likely is', () => {
    const recipe = refusal(() =>
      parseRecipeDocument('description: d\nengine: noop\ntimout: PT1M\n', {
        name: 'r',
        path: 'r.yaml',
        source: 'project',
      }),
    );
    expect(recipe.issues?.[0]?.message).toMatch(/^unknown field \(did you mean "timeout"\?\)/);
    const workflow = refusal(() =>
      parseWorkflowDocument('description: w\nsteps:\n  - name: one\n    recipie: noop\n', {
        name: 'w',
        path: 'w.yaml',
      }),
    );
    expect(workflow.issues?.find((i) => i.path === 'steps[0].recipie')?.message).toMatch(
      /^unknown field \(did you mean "recipe"\?\); the fields are name, /,
    );
  });
});
