import { describe, expect, it } from 'vitest';
import type { UrsaError } from '../../src/errors/index.js';
import { BUILTIN_RECIPES, builtinRecipe } from '../../src/recipes/builtin.js';
import type { RecipeDefinition } from '../../src/recipes/recipe.js';
import { mergeParams, resolveRecipe } from '../../src/recipes/resolve.js';
import { thrown } from '../support/cron.js';

function recipe(name: string, source: RecipeDefinition['source'], engine = 'shell'): RecipeDefinition {
  return {
    name,
    description: `${source} ${name}`,
    engine,
    params: {},
    command: ['run'],
    url: undefined,
    headers: undefined,
    secretHeaders: undefined,
    timeoutMs: undefined,
    source,
  };
}

function lookup(project: RecipeDefinition[], tenant: RecipeDefinition[]) {
  const asked: string[] = [];
  return {
    asked,
    project: (name: string) => {
      asked.push(`project:${name}`);
      return project.find((r) => r.name === name);
    },
    tenant: (name: string) => {
      asked.push(`tenant:${name}`);
      return tenant.find((r) => r.name === name);
    },
  };
}

// decisions §2: recipes resolve project → _tenant → built-in; the first level that has one wins whole.
describe('recipe cascade (decisions §2)', () => {
  it('takes the project recipe over the tenant one', () => {
    const levels = lookup([recipe('backup', 'project')], [recipe('backup', 'tenant')]);
    expect(resolveRecipe('backup', levels)?.source).toBe('project');
    expect(levels.asked).toEqual(['project:backup']);
  });

  it('falls back to the tenant recipe', () => {
    const levels = lookup([], [recipe('backup', 'tenant')]);
    expect(resolveRecipe('backup', levels)?.source).toBe('tenant');
    expect(levels.asked).toEqual(['project:backup', 'tenant:backup']);
  });

  it('falls back to the built-in recipe, which a project may override', () => {
    expect(resolveRecipe('noop', lookup([], []))).toBe(builtinRecipe('noop'));
    expect(resolveRecipe('noop', lookup([recipe('noop', 'project')], []))?.source).toBe('project');
  });

  it('returns undefined when no level has the recipe', () => {
    expect(resolveRecipe('missing', lookup([], []))).toBeUndefined();
  });

  it('uses a given built-in lookup instead of the shipped list', () => {
    const levels = { ...lookup([], []), builtin: (name: string) => recipe(name, 'builtin', 'noop') };
    expect(resolveRecipe('extra', levels)?.source).toBe('builtin');
  });

  it('refuses a name outside the name rule before any lookup (decisions §6)', () => {
    const levels = lookup([], []);
    expect((thrown(() => resolveRecipe('../secrets', levels)) as UrsaError).code).toBe('NAME_INVALID');
    expect(levels.asked).toEqual([]);
  });
});

describe('built-in recipes (decisions §2)', () => {
  it('ships noop, frozen', () => {
    expect(builtinRecipe('noop')).toEqual({
      name: 'noop',
      description: 'Does nothing; for tests and benchmarks.',
      engine: 'noop',
      params: {},
      command: undefined,
      timeoutMs: undefined,
      source: 'builtin',
    });
    expect(Object.isFrozen(builtinRecipe('noop'))).toBe(true);
    expect([...BUILTIN_RECIPES.keys()]).toEqual(['noop']);
  });
});

// spec §2: a scheduler's params override the recipe defaults, per key.
describe('mergeParams (spec §2)', () => {
  it('merges shallowly, the scheduler winning per key', () => {
    const defaults = { model: 'default:slow', depth: 2, nested: { a: 1, b: 2 } };
    const overrides = { model: 'default:fast', nested: { a: 9 } };
    expect(mergeParams(defaults, overrides)).toEqual({ model: 'default:fast', depth: 2, nested: { a: 9 } });
    expect(defaults).toEqual({ model: 'default:slow', depth: 2, nested: { a: 1, b: 2 } });
  });

  it('copies a __proto__ key as data, never changing the prototype', () => {
    const merged = mergeParams({}, JSON.parse('{"__proto__": {"admin": true}}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect((merged as { admin?: boolean }).admin).toBeUndefined();
    expect(Object.keys(merged)).toEqual(['__proto__']);
  });
});
