import type { z } from 'zod';
import { didYouMean } from '../errors/did-you-mean.js';
import type { ValidationIssue } from '../errors/index.js';
import { appendField, fieldPath } from './field-path.js';

const SHOWN_CHARS = 60;

/** How a value reads in a message: `the string "yes"`, `the number 3`, `a list`, `null`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = value.length > SHOWN_CHARS ? `${value.slice(0, SHOWN_CHARS)}…` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number' || typeof value === 'bigint') return `the number ${String(value)}`;
  if (typeof value === 'boolean') return `the boolean ${value}`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  boolean: 'a boolean (true or false)',
  number: 'a number',
  int: 'a whole number',
  object: 'a mapping',
  record: 'a mapping',
  map: 'a mapping',
  array: 'a list',
  tuple: 'a list',
  null: 'null',
};

function expectedText(expected: string): string {
  return EXPECTED[expected] ?? `a ${expected}`;
}

/**
 * Zod error map (pass as `safeParse(value, { error: issueMessage })`) writing each issue as
 * "what was expected, what was found", e.g. `expected a boolean (true or false), found the string
 * "yes"`. Messages given by the schema itself (refinements) are kept.
 */
export const issueMessage: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined
        ? `is required (${expectedText(issue.expected)})`
        : `expected ${expectedText(issue.expected)}, found ${describeValue(issue.input)}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => String(v)).join(', ')}, found ${describeValue(issue.input)}`;
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      if (issue.origin === 'array') return `must hold at least ${String(issue.minimum)} item(s)`;
      return `must be at least ${String(issue.minimum)}, found ${describeValue(issue.input)}`;
    case 'too_big':
      if (issue.origin === 'string') return `is longer than ${String(issue.maximum)} characters`;
      if (issue.origin === 'array') return `holds more than ${String(issue.maximum)} items`;
      return `must be at most ${String(issue.maximum)}, found ${describeValue(issue.input)}`;
    case 'unrecognized_keys':
      return 'unknown field';
    default:
      return undefined;
  }
};

/** The zod definition fields this module reads to walk a schema (zod 4's `_zod.def`). */
interface SchemaDef {
  readonly type: string;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly element?: z.ZodType;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly options?: readonly z.ZodType[];
}

/**
 * The field names of the mapping at `path` in `schema`, to name the allowed ones beside an unknown
 * field (`retry.attemps` lists `retry`'s fields, not the document's). Null when the schema there is
 * not an object with a known shape.
 */
export function schemaFieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): readonly string[] | null {
  const def = (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
  const inner = def.innerType ?? def.in;
  if (inner !== undefined) return schemaFieldsAt(inner, path);
  if (path.length === 0) return def.type === 'object' && def.shape ? Object.keys(def.shape) : null;
  const [head, ...rest] = path;
  if (def.type === 'object' && def.shape && typeof head === 'string') {
    const child = def.shape[head];
    return child === undefined ? null : schemaFieldsAt(child, rest);
  }
  if (def.type === 'array' && def.element && typeof head === 'number')
    return schemaFieldsAt(def.element, rest);
  if (def.type === 'union' && def.options) {
    for (const option of def.options) {
      const fields = schemaFieldsAt(option, path);
      if (fields !== null) return fields;
    }
  }
  return null;
}

/**
 * Zod's issues as {@link ValidationIssue}s: paths written as {@link fieldPath} does, and an
 * unknown-keys issue split into one issue per unknown field whose message names the fields allowed
 * there (read from `schema` at the issue's path) and the near miss it likely is (issue #23:
 * `timezon` → `did you mean "timezone"?`).
 */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[], schema: z.ZodType): ValidationIssue[] {
  return issues.flatMap((issue): ValidationIssue[] => {
    const path = fieldPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const allowed = schemaFieldsAt(schema, issue.path) ?? [];
      const list = allowed.length === 0 ? '' : `; the fields are ${allowed.join(', ')}`;
      return issue.keys.map((key) => ({
        path: appendField(path, key),
        message: `unknown field${didYouMean(key, allowed)}${list}`,
      }));
    }
    return [{ path, message: issue.message }];
  });
}

/**
 * Orders issues for reading: whole-document issues first, then by the position of their
 * top-level field in `fields` (the schema's order), unknown fields last; stable otherwise.
 */
export function sortIssues(issues: readonly ValidationIssue[], fields: readonly string[]): ValidationIssue[] {
  const rank = (issue: ValidationIssue): number => {
    if (issue.path === '') return -1;
    const top = /^[^.[]*/.exec(issue.path)?.[0] ?? '';
    const index = fields.indexOf(top);
    return index === -1 ? fields.length : index;
  };
  return issues
    .map((issue, index) => ({ issue, index, rank: rank(issue) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map((entry) => entry.issue);
}
