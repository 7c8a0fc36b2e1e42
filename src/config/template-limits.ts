/**
 * The bounds of workflow templates (issue #19): how much text a template may be, how long and how
 * much memory one step's render may take, and how much its output may weigh. The operator sets
 * them (`schema.ts` beside it, docs/configuration.md); these are the defaults.
 */
export interface TemplateLimits {
  /** Longest template (one param string), in characters; longer is refused when written. */
  readonly parseChars: number;
  /**
   * Wall-clock budget of rendering one step's params, milliseconds, shared by all of them; the
   * render stops at the first tag or output past it. Checked between nodes, so one node's own
   * work (a filter on a large value) is bounded by `memoryUnits` instead.
   */
  readonly renderMs: number;
  /**
   * Allocation budget of rendering one step's params, shared by all of them, in Liquid's units:
   * characters of every string a filter, capture or output makes, and elements of every list a
   * range or filter makes.
   */
  readonly memoryUnits: number;
  /**
   * Longest list a filter may be given (its input or an argument), in elements: a filter runs as
   * one step, so the render limit cannot stop it midway.
   */
  readonly listElements: number;
  /** Largest rendered param (one string), in bytes of UTF-8. */
  readonly paramBytes: number;
  /** Largest sum of a run's rendered params over all its steps, in bytes of UTF-8. */
  readonly runBytes: number;
}

/**
 * The defaults, measured with `npm run bench -- templates` to keep the worst render found under
 * about 50 ms of event-loop time on a small machine (2 cores).
 */
export const DEFAULT_TEMPLATE_LIMITS: TemplateLimits = {
  parseChars: 8_192,
  renderMs: 20,
  memoryUnits: 250_000,
  listElements: 2_000,
  paramBytes: 65_536,
  runBytes: 1_048_576,
};
