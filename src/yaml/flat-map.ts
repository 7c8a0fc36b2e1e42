import { stringify } from 'yaml';

/** A scalar a flat YAML mapping holds. */
export type FlatScalar = string | number | boolean | null;

// What the `yaml` package writes plain (unquoted) under its default YAML 1.2 core schema:
// identifiers that are not one of its keywords, and ISO-8601 instants as Ursa formats them.
const PLAIN_KEY = /^[A-Za-z][A-Za-z0-9]*$/;
const PLAIN_STRING = /^(?:[A-Za-z][A-Za-z0-9_.-]*|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3})?Z)$/;
const KEYWORD = /^(?:true|True|TRUE|false|False|FALSE|null|Null|NULL)$/;

/** The scalar as `yaml` writes it, or undefined when only the package knows (quoting, escapes, block scalars). */
function plain(value: FlatScalar): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && !Object.is(value, -0) ? String(value) : undefined;
  return PLAIN_STRING.test(value) && !KEYWORD.test(value) ? value : undefined;
}

// One line per value: a block scalar (`|+`) does not read back what it wrote for a value whose
// first line is only spaces ("    \n" reads back as "\n"), so text that is not plain is written
// double-quoted, with escapes.
const STRINGIFY = { lineWidth: 0, blockQuote: false } as const;

/**
 * The YAML block mapping of a flat record of scalars, without a final newline: byte for byte what
 * `yaml`'s `stringify(record, { lineWidth: 0, blockQuote: false })` writes (trimmed), at a small part of its cost. A
 * run log's front matter is rendered for every run (spec §9a), where the package's document model
 * was about a sixth of a saturated worker's time (issue #11). A record with any key or value that
 * is not plain (one that needs quoting, escapes or a block scalar) goes through the package whole,
 * so its rules stay the only quoting rules. `undefined` values are left out, as the package does.
 */
export function stringifyFlatMap(record: Readonly<Record<string, FlatScalar | undefined>>): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    const text = PLAIN_KEY.test(key) && !KEYWORD.test(key) ? plain(value) : undefined;
    if (text === undefined) return stringify(record, STRINGIFY).trimEnd();
    lines.push(`${key}: ${text}`);
  }
  return lines.length === 0 ? '{}' : lines.join('\n');
}
