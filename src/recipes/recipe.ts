/**
 * A validated recipe (`_vance/recipes/<name>.yaml`, decisions §2): a named process configuration
 * for an engine. Only the recipe parser (or the built-in list) creates one.
 */
export interface RecipeDefinition {
  readonly name: string;
  readonly description: string;
  /** Engine name, e.g. `shell`, `noop`, `http`, or one registered by a library user. */
  readonly engine: string;
  /** Default params; a scheduler's `params` are merged over them (shallow, per key). */
  readonly params: Readonly<Record<string, unknown>>;
  /** `shell` engine: the argv array to execute (never a shell string). */
  readonly command: readonly string[] | undefined;
  /** Longest a process may run, milliseconds; the engine kills it after that. */
  readonly timeoutMs: number | undefined;
  /** Where the recipe came from. */
  readonly source: 'project' | 'tenant' | 'builtin';
}
