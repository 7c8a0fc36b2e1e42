import type { TemplateLimits } from '../config/template-limits.js';
import { ALLOWED_TAGS, FileAccessRefused, ListTooLong } from './template-sandbox.js';

/** A word the library quotes back that is safe to repeat: a tag, filter or variable name. */
const NAME = /^[A-Za-z_#][A-Za-z0-9_.[\]'"-]{0,99}$/;

interface LiquidLike {
  readonly message?: unknown;
  readonly originalError?: unknown;
  readonly token?: { readonly name?: unknown; getPosition?: () => [number, number] };
}

/** The error and the errors it wraps (Liquid wraps a filter's error in a RenderError). */
function chain(error: unknown): LiquidLike[] {
  const errors: LiquidLike[] = [];
  for (let e = error; typeof e === 'object' && e !== null && errors.length < 8; ) {
    errors.push(e as LiquidLike);
    e = (e as LiquidLike).originalError;
  }
  return errors;
}

/** Liquid's message without the position it appends (`…, line:1, col:7`). */
function bare(message: unknown): string {
  return typeof message === 'string' ? message.replace(/, line:\d+, col:\d+[\s\S]*$/, '') : '';
}

function quotedName(message: string, pattern: RegExp): string | undefined {
  const name = pattern.exec(message)?.[1];
  return name !== undefined && NAME.test(name) ? name : undefined;
}

/** Where in the template Liquid stopped, when it says (`line 1, column 7`). */
function position(errors: readonly LiquidLike[]): string {
  for (const e of errors) {
    const at = e.token?.getPosition?.();
    if (Array.isArray(at)) return ` (line ${at[0]}, column ${at[1]})`;
  }
  return '';
}

/**
 * What went wrong with a template, in Ursa's words (issue #19): the limit it hit and the
 * setting that holds it, the tag or filter it may not use and what is allowed, or where its
 * syntax is wrong. Never the library's own text, which can name files and carries a stack.
 * `stage` says whether the template was being read (`parse`) or rendered.
 */
export function templateProblem(error: unknown, limits: TemplateLimits, stage: 'parse' | 'render'): string {
  const errors = chain(error);
  const messages = errors.map((e) => bare(e.message));
  const has = (text: string) => messages.some((m) => m === text);
  if (errors.some((e) => e instanceof FileAccessRefused))
    return 'tried to read a file; templates read no files';
  const long = errors.find((e): e is ListTooLong => e instanceof ListTooLong);
  if (long !== undefined)
    return `gives a filter a list of ${long.length} elements; at most ${limits.listElements} are allowed (templateListLimit)`;
  if (has('template render limit exceeded'))
    return `took longer than ${limits.renderMs} ms to render, the limit for one step's params (templateRenderLimit)`;
  if (has('memory alloc limit exceeded') || messages.some((m) => /^Invalid (string|array) length$/.test(m)))
    return `allocates more than ${limits.memoryUnits} characters and list elements, the limit for one step's params (templateMemoryLimit)`;
  if (has('parse length limit exceeded'))
    return `is longer than ${limits.parseChars} characters (templateParseLimit)`;
  if (messages.some((m) => m === 'Maximum call stack size exceeded')) return 'nests too deeply';
  for (const message of messages) {
    const tag = quotedName(message, /^tag "([^"]*)" not found$/);
    if (tag !== undefined)
      return `uses the tag ${tag}, which templates may not use; allowed tags: ${ALLOWED_TAGS.join(', ')}`;
    const filter = quotedName(message, /^undefined filter: (\S+)$/);
    if (filter !== undefined) return `uses the filter ${filter}, which templates do not have`;
    const variable = quotedName(message, /^undefined variable: (\S+)$/);
    if (variable !== undefined) return `refers to ${variable}, which is not defined here${position(errors)}`;
    if (/^tag .* not closed$/.test(message)) {
      const name = errors.map((e) => e.token?.name).find((n) => typeof n === 'string' && NAME.test(n));
      return `has a tag${name === undefined ? '' : ` ${name}`} that is not closed${position(errors)}`;
    }
  }
  return stage === 'parse'
    ? `is not a valid template${position(errors)}`
    : `could not be rendered${position(errors)}`;
}
