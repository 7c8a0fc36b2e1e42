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
  /** `http` and `agent` engines (issues #5, #25): the absolute http:// or https:// URL the run POSTs to. */
  readonly url: string | undefined;
  /** `http` engine: header name → literal value, sent with every request. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /**
   * `http` engine: header name → the NAME of the environment variable holding the header's value,
   * read from the worker's environment at run time (e.g. `Authorization: URSA_SECRET_HOOK_TOKEN`).
   * The value is never stored in the recipe nor written to a log.
   */
  readonly secretHeaders: Readonly<Record<string, string>> | undefined;
  /**
   * Longest a process may run, milliseconds; the engine kills it after that. Unset: no limit for
   * `shell`, 30 s for `http`.
   */
  readonly timeoutMs: number | undefined;
  /**
   * `agent` engine (issue #25): longest the agent service may stay silent (no callback), ms; a
   * run silent longer fails with reason `heartbeat-timeout`. Absent for other engines.
   */
  readonly heartbeatTimeoutMs?: number;
  /** Where the recipe came from. */
  readonly source: 'project' | 'tenant' | 'builtin';
}
