import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engines/engine.js';
import { defaultEngines, EngineRegistry, noopEngine } from '../../src/engines/index.js';
import { isUrsaError, type UrsaError } from '../../src/errors/index.js';
import { request } from './helpers.js';

describe('noop engine (decisions §2)', () => {
  it('ends done at once', async () => {
    expect(noopEngine.name).toBe('noop');
    expect(await noopEngine.run(request(undefined))).toEqual({ status: 'done' });
  });

  it('ends stopped when the signal is already aborted, with a string abort reason as reason', async () => {
    const plain = new AbortController();
    plain.abort();
    expect(await noopEngine.run(request(undefined, { signal: plain.signal }))).toEqual({
      status: 'stopped',
      reason: 'stopped',
    });
    const named = new AbortController();
    named.abort('shutdown');
    expect(await noopEngine.run(request(undefined, { signal: named.signal }))).toEqual({
      status: 'stopped',
      reason: 'shutdown',
    });
  });
});

function thrown(action: () => unknown): UrsaError {
  try {
    action();
  } catch (error) {
    if (isUrsaError(error)) return error;
    throw error;
  }
  throw new Error('expected an UrsaError');
}

describe('EngineRegistry (decisions §2: engines are code, more registered by library users)', () => {
  const custom: Engine = { name: 'custom', run: async () => ({ status: 'done' }) };

  it('finds registered engines by name and lists names in registration order', () => {
    const registry = new EngineRegistry().register(noopEngine).register(custom);
    expect(registry.get('custom')).toBe(custom);
    expect(registry.get('noop')).toBe(noopEngine);
    expect(registry.get('http')).toBeUndefined();
    expect(registry.names()).toEqual(['noop', 'custom']);
  });

  it('refuses a second engine with a taken name with ENGINE_INVALID, keeping the first', () => {
    const registry = new EngineRegistry().register(custom);
    const error = thrown(() =>
      registry.register({ name: 'custom', run: async () => ({ status: 'failed' }) }),
    );
    expect(error.code).toBe('ENGINE_INVALID');
    expect(error.message).toBe('engine: "custom" is already registered');
    expect(error.field).toBe('name');
    expect(error.value).toBe('custom');
    expect(registry.get('custom')).toBe(custom);
    expect(registry.names()).toEqual(['custom']);
  });

  it('refuses an empty name with ENGINE_INVALID', () => {
    const error = thrown(() =>
      new EngineRegistry().register({ name: '', run: async () => ({ status: 'done' }) }),
    );
    expect(error.code).toBe('ENGINE_INVALID');
    expect(error.message).toBe('engine: a non-empty name is required');
  });

  it('defaultEngines() holds shell, noop, http (issue #5) and agent (issue #25), and a fresh registry each call', async () => {
    const registry = defaultEngines();
    expect(registry.names()).toEqual(['shell', 'noop', 'http', 'agent']);
    expect(registry.get('agent')?.handsOff).toBe(true);
    expect(registry.get('noop')).toBe(noopEngine);
    expect(registry.get('shell')?.name).toBe('shell');
    expect(registry.get('http')?.name).toBe('http');
    registry.register(custom);
    expect(defaultEngines().names()).toEqual(['shell', 'noop', 'http', 'agent']);
  });
});
