import {
  type Context,
  type Emitter,
  type FilterImplOptions,
  type FS,
  Liquid,
  Token,
  toValue,
} from 'liquidjs';
import type { TemplateLimits } from '../config/template-limits.js';

/**
 * The tags a workflow template may use (issue #19): conditions, loops, variables and comments —
 * what a param needs to be built from the values given. Every other tag of the library is
 * removed from the engine, so a template holding one does not parse, when written or when run:
 * `include`, `render` and `layout` load files, `block` belongs to `layout`, and `cycle`,
 * `increment`, `decrement` and `tablerow` (counters that write into the values given, HTML
 * tables) have no use in a param. `elsif`, `else`, `when`, `endfor`… are parts of these tags.
 * Filters: all of Liquid's but the `*_exp` family (`where_exp`, `group_by_exp`…), which evaluate
 * an expression per list element inside one step of the render, beyond the render limit.
 */
export const ALLOWED_TAGS: readonly string[] = [
  'if',
  'unless',
  'case',
  'for',
  'break',
  'continue',
  'assign',
  'capture',
  'echo',
  'liquid',
  'raw',
  'comment',
  '#',
];

/** Thrown by {@link NO_FILES}: the engine asked for a file, which a template never gets. */
export class FileAccessRefused extends Error {
  constructor() {
    super('workflow templates read no files');
    this.name = 'FileAccessRefused';
  }
}

function refuse(): never {
  throw new FileAccessRefused();
}

/**
 * The engine's file system: every method refuses, so that even a loading tag that somehow
 * reached the engine could neither read a file nor tell whether one exists.
 */
export const NO_FILES: FS = {
  exists: async () => refuse(),
  existsSync: refuse,
  readFile: async () => refuse(),
  readFileSync: refuse,
  resolve: refuse,
  contains: async () => refuse(),
  containsSync: refuse,
  dirname: refuse,
  fallback: refuse,
  sep: '/',
};

/** Thrown by a filter given a list longer than `TemplateLimits.listElements`. */
export class ListTooLong extends Error {
  constructor(readonly length: number) {
    super(`a filter was given a list of ${length} elements`);
    this.name = 'ListTooLong';
  }
}

/**
 * `impl` refusing lists longer than `maxElements` as its input or an argument: a filter's own
 * work is one step for the render limit, which it checks only between steps, and `where`,
 * `sort`, `map`… take microseconds per element.
 */
function boundedFilter(impl: FilterImplOptions, maxElements: number): FilterImplOptions {
  const handler = typeof impl === 'function' ? impl : impl.handler;
  const check = (value: unknown) => {
    if (Array.isArray(value) && value.length > maxElements) throw new ListTooLong(value.length);
  };
  return {
    raw: typeof impl !== 'function' && impl.raw,
    handler(value: unknown, ...args: unknown[]) {
      check(value);
      for (const arg of args) {
        check(arg);
        // A keyword argument (`truncate: 5, ellipsis: "…"`) arrives as a [name, value] pair.
        if (Array.isArray(arg) && arg.length === 2) check(arg[1]);
      }
      return handler.call(this, value, ...args);
    },
  };
}

let lineStarts: { input: string; starts: number[] } | undefined;

/**
 * Liquid's `Token.getPosition`, the same [line, column], in logarithmic time: the library counts
 * from the start of the text each time, and its static analysis asks once per variable, which
 * made checking a template of a few thousand references take seconds (quadratic). The line
 * starts of the last text asked about are kept.
 */
function position(this: Token): [number, number] {
  if (lineStarts?.input !== this.input) {
    const starts = [0];
    for (let i = this.input.indexOf('\n'); i >= 0; i = this.input.indexOf('\n', i + 1)) starts.push(i + 1);
    lineStarts = { input: this.input, starts };
  }
  const { starts } = lineStarts;
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] ?? 0) <= this.begin) low = middle;
    else high = middle - 1;
  }
  return [low + 1, this.begin - (starts[low] ?? 0) + 1];
}
Token.prototype.getPosition = position;

/** Liquid's own text form of a rendered value (its `stringify`, which it does not export). */
function textOf(value: unknown): string {
  const resolved: unknown = toValue(value);
  if (typeof resolved === 'string') return resolved;
  if (resolved === null || resolved === undefined) return '';
  if (Array.isArray(resolved)) return resolved.map(textOf).join('');
  return String(resolved);
}

/**
 * An emitter that charges what it is written to the render's memory budget. Liquid charges the
 * strings its filters make but not what outputs and `capture` write, so a loop that outputs or
 * captures a value doubling each time would otherwise grow without bound.
 */
class ChargedEmitter implements Emitter {
  buffer = '';
  constructor(private readonly memory: Context['memoryLimit']) {}
  write(html: unknown): void {
    const text = textOf(html);
    this.memory.use(text.length);
    this.buffer += text;
  }
}

/**
 * A Liquid engine that is a sandbox by construction: no file system (no root, partials or
 * layouts, {@link NO_FILES}, no relative or dynamic partials), only {@link ALLOWED_TAGS},
 * strict about unknown names and filters, no prototype access, Liquid's own parse, render and
 * memory limits set from `limits`, outputs and captures charged to the memory budget, and lists
 * given to a filter no longer than `limits.listElements`.
 * Delimiters `${{ … }}` and `${% … %}`, so a literal `{{` or `{%` in a param stays text.
 */
export function sandboxEngine(limits: TemplateLimits): Liquid {
  const liquid = new Liquid({
    outputDelimiterLeft: '${{',
    outputDelimiterRight: '}}',
    tagDelimiterLeft: '${%',
    tagDelimiterRight: '%}',
    strictVariables: true,
    strictFilters: true,
    ownPropertyOnly: true,
    fs: NO_FILES,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    dynamicPartials: false,
    jekyllInclude: false,
    cache: false,
    parseLimit: limits.parseChars,
    renderLimit: limits.renderMs,
    memoryLimit: limits.memoryUnits,
  });
  const allowed = new Set(ALLOWED_TAGS);
  // Removed rather than checked: a tag the engine does not have cannot run, whatever the input.
  for (const name of Object.keys(liquid.tags)) if (!allowed.has(name)) delete liquid.tags[name];
  for (const [name, impl] of Object.entries(liquid.filters)) {
    if (name.endsWith('_exp')) liquid.unregisterFilter(name);
    else liquid.registerFilter(name, boundedFilter(impl, limits.listElements));
  }
  const renderer = liquid.renderer;
  const renderTemplates = renderer.renderTemplates;
  renderer.renderTemplates = function (templates, ctx, emitter) {
    return renderTemplates.call(this, templates, ctx, emitter ?? new ChargedEmitter(ctx.memoryLimit));
  };
  return liquid;
}
