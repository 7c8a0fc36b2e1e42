import { UrsaError } from '../errors/index.js';
import { createAgentEngine } from './agent.js';
import type { Engine } from './engine.js';
import { createHttpEngine, type HttpEngineOptions } from './http.js';
import { noopEngine } from './noop.js';
import { createShellEngine } from './shell.js';

/**
 * The engines a worker can run, by name (decisions §2: engines are code). One registry per worker,
 * built by its owner; there is no global registry. A recipe's `engine` field names one entry.
 */
export class EngineRegistry {
  readonly #engines = new Map<string, Engine>();

  /**
   * Adds an engine under its `name`. Returns the registry, for chaining.
   *
   * @throws UrsaError `ENGINE_INVALID` when the name is empty or already registered.
   */
  register(engine: Engine): this {
    const { name } = engine;
    if (typeof name !== 'string' || name === '') {
      throw new UrsaError('ENGINE_INVALID', 'engine: a non-empty name is required', {
        field: 'name',
        value: name,
      });
    }
    if (this.#engines.has(name)) {
      throw new UrsaError('ENGINE_INVALID', `engine: ${JSON.stringify(name)} is already registered`, {
        field: 'name',
        value: name,
        allowed: 'a name not yet registered',
      });
    }
    this.#engines.set(name, engine);
    return this;
  }

  /** The engine registered under `name`, or `undefined`. */
  get(name: string): Engine | undefined {
    return this.#engines.get(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#engines.keys()];
  }
}

/** Options of {@link defaultEngines}. */
export interface DefaultEnginesOptions {
  /**
   * Options of the `http` and `agent` engines: the operator's outbound policy and secret bindings
   * (issue #19).
   */
  readonly http?: HttpEngineOptions;
}

/**
 * A new registry with the built-in engines (decisions §2), in this order: `shell`, `noop`, `http`
 * (issue #5) and `agent` (issue #25), `shell` with default options, `http` and `agent` with
 * `options.http` (by default they read secret headers from `process.env` and refuse only the
 * ranges denied by default).
 *
 * @throws UrsaError `ARGUMENT_INVALID` for bad `http` options (see `createHttpEngine`).
 */
export function defaultEngines(options: DefaultEnginesOptions = {}): EngineRegistry {
  return new EngineRegistry()
    .register(createShellEngine())
    .register(noopEngine)
    .register(createHttpEngine(options.http))
    .register(createAgentEngine(options.http));
}
