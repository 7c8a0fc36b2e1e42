import { performance } from 'node:perf_hooks';
import { Context, type Liquid, type Template } from 'liquidjs';
import { DEFAULT_TEMPLATE_LIMITS, type TemplateLimits } from '../config/template-limits.js';
import { UrsaError } from '../errors/index.js';
import { templateProblem } from './template-errors.js';
import { sandboxEngine } from './template-sandbox.js';

/**
 * The reference syntax of workflow step params (issue #10): `${{ params.<name> }}` and
 * `${{ steps.<step>.output }}`, with Liquid filters (`${{ steps.fetch.output | strip }}`) and the
 * tags of `ALLOWED_TAGS` written `${% … %}`. Templates are a sandbox (issue #19): they read no
 * file, and parse, render, memory and output are bounded by {@link TemplateLimits}.
 */

/** What references may name when a step starts. */
export interface TemplateScope {
  readonly params: Readonly<Record<string, unknown>>;
  /** Earlier steps by name, each with its `output` (text). */
  readonly steps: Readonly<Record<string, { readonly output: string }>>;
}

const engines = new Map<string, Liquid>();

/** The sandboxed engine for `limits`, made once per set of limits (a process has one or two). */
function engineFor(limits: TemplateLimits): Liquid {
  const key = JSON.stringify(limits);
  let engine = engines.get(key);
  if (engine === undefined) {
    engine = sandboxEngine(limits);
    engines.set(key, engine);
  }
  return engine;
}

/** Whether a string is a template at all: text without `${` is a param as it is. */
function isTemplate(text: string): boolean {
  return text.includes('${');
}

/**
 * Checks a param string when it is written: its length, syntax, tags and filters.
 *
 * @returns the variables it refers to from outside (its own `assign`, `capture` and `for`
 *   variables excluded), each as path segments (`['steps', 'fetch', 'output']`); or the problem
 *   in Ursa's words ("uses the tag include, which templates may not use; …").
 */
export function checkTemplate(
  text: string,
  limits: TemplateLimits = DEFAULT_TEMPLATE_LIMITS,
): { readonly references: string[][] } | { readonly problem: string } {
  if (!isTemplate(text)) return { references: [] };
  if (text.length > limits.parseChars)
    return {
      problem: `is ${text.length} characters long; a template may have at most ${limits.parseChars} (templateParseLimit)`,
    };
  const engine = engineFor(limits);
  try {
    const parsed = engine.parse(text);
    return { references: engine.globalVariableSegmentsSync(parsed).map((segments) => segments.map(String)) };
  } catch (error) {
    return { problem: templateProblem(error, limits, 'parse') };
  }
}

/** `value` with each string replaced by `render(path, text)`, recursively through lists and mappings. */
function mapStrings(value: unknown, path: string, render: (path: string, text: string) => string): unknown {
  if (typeof value === 'string') return render(path, value);
  if (Array.isArray(value)) return value.map((item, i) => mapStrings(item, `${path}[${i}]`, render));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, mapStrings(v, `${path}.${k}`, render)]),
    );
  return value;
}

/** Every string inside a value, with its field path below `path` (`steps[0].params.topic`). */
export function templateStrings(value: unknown, path: string): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  mapStrings(value, path, (at, text) => {
    found.push({ path: at, text });
    return text;
  });
  return found;
}

/**
 * Renders one step's params against `scope`: every string holding `${` is a template, the rest
 * are kept as they are. All the step's templates share one render budget (`renderMs` and
 * `memoryUnits`), so one step holds the event loop for about `renderMs` at most; each rendered
 * string may weigh `paramBytes`, and the run's rendered params `runBytes` together, counting
 * `spentBytes` from its earlier steps.
 *
 * @returns the rendered params and the bytes their templates rendered (to add to `spentBytes`).
 * @throws UrsaError `TEMPLATE_FAILED` naming the param (`params.topic`), the limit or the reason,
 *   in Ursa's words; the step fails with it.
 */
export function renderStepParams(
  params: Readonly<Record<string, unknown>>,
  scope: TemplateScope,
  limits: TemplateLimits = DEFAULT_TEMPLATE_LIMITS,
  spentBytes = 0,
): { readonly params: Record<string, unknown>; readonly bytes: number } {
  const engine = engineFor(limits);
  // One budget for the step: its deadline and memory count run from here, across every param.
  const budget = new Context({}, engine.options, { sync: true }, { liquid: engine });
  const shared = { liquid: engine, memoryLimit: budget.memoryLimit, renderLimit: budget.renderLimit };
  let bytes = 0;
  const fail = (path: string, problem: string): never => {
    throw new UrsaError('TEMPLATE_FAILED', `${path}: ${problem}`, { field: path });
  };
  const render = (path: string, text: string): string => {
    if (!isTemplate(text)) return text;
    let output: string;
    try {
      // Parsing is not timed by Liquid: check the deadline before each template is parsed.
      budget.renderLimit.check(performance.now());
      const templates: Template[] = engine.parse(text);
      // Each template gets its own variables, and shares the step's render and memory budget.
      output = String(
        engine.renderSync(templates, new Context(scope, engine.options, { sync: true }, shared)),
      );
    } catch (error) {
      return fail(path, templateProblem(error, limits, 'render'));
    }
    const size = Buffer.byteLength(output);
    if (size > limits.paramBytes)
      fail(path, `renders ${size} bytes; a param may have at most ${limits.paramBytes} (templateParamLimit)`);
    bytes += size;
    if (spentBytes + bytes > limits.runBytes)
      fail(
        path,
        `brings the run's rendered params to ${spentBytes + bytes} bytes; a run may render at most ${limits.runBytes} (templateRunLimit)`,
      );
    return output;
  };
  return { params: mapStrings(params, 'params', render) as Record<string, unknown>, bytes };
}
