import { type Document, LineCounter, parseAllDocuments, type YAMLError } from 'yaml';
import { UrsaError } from '../errors/index.js';
import {
  ALLOWED_CHARACTERS,
  codePointName,
  findForbiddenCharacter,
  findForbiddenString,
  forbiddenCharacterWords,
} from './characters.js';
import { topField } from './field-path.js';
import { inspectDocument } from './inspect.js';
import { keyPathAt } from './key-path.js';
import { MAX_ALIASES, MAX_DEPTH, MAX_DOCUMENT_BYTES } from './limits.js';

interface Refusal {
  readonly reason: string;
  /** Character offset the reason is about, when there is one. */
  readonly offset?: number;
  readonly field?: string;
  readonly value?: unknown;
  /** What would have been accepted, when the refusal says. */
  readonly allowed?: string;
  /** Report only the top-level field of the key path (for nesting, where the full path is huge). */
  readonly topOnly?: boolean;
}

function refuse(source: string, lines: LineCounter, refusal: Refusal): never {
  const { reason, offset, field, value, allowed } = refusal;
  let where = '';
  if (offset !== undefined) {
    const { line, col } = lines.linePos(offset);
    where = `line ${line}, column ${col}: `;
  }
  throw new UrsaError('DOCUMENT_INVALID', `${source}: ${where}${reason}`, {
    ...(field === undefined || field === '' ? {} : { field }),
    ...(value === undefined ? {} : { value }),
    ...(allowed === undefined ? {} : { allowed }),
    issues: [{ path: field ?? '', message: `${where}${reason}` }],
  });
}

/** The reason for one of the `yaml` package's parse errors or warnings, in Ursa's words. */
function yamlReason(error: YAMLError, text: string, doc: Document | undefined): Refusal {
  const offset = error.pos[0];
  const first = (error.message.split('\n')[0] ?? '').replace(/\.$/, '');
  const said = first.charAt(0).toLowerCase() + first.slice(1);
  switch (error.code) {
    case 'DUPLICATE_KEY': {
      const key = (doc && keyPathAt(doc, offset)?.key) ?? text.slice(error.pos[0], error.pos[1]).trim();
      return { offset, reason: `duplicate key ${JSON.stringify(key)}`, value: key };
    }
    case 'BAD_ALIAS':
    case 'UNEXPECTED_TOKEN':
      return /alias/i.test(first)
        ? { offset, reason: `${said} (quote a value that starts with * or &, e.g. "*/5 * * * * *")` }
        : { offset, reason: said };
    case 'RESOURCE_EXHAUSTION':
      return { offset, reason: `nesting deeper than ${MAX_DEPTH} levels`, topOnly: true };
    default:
      return { offset, reason: said };
  }
}

const OPTIONS = {
  version: '1.2',
  schema: 'core',
  uniqueKeys: true,
  prettyErrors: false,
  logLevel: 'silent',
  merge: false,
} as const;

/**
 * Loads one YAML document safely (decisions §6) and returns its plain value (mappings become
 * objects, lists arrays; `null` for an empty document). YAML 1.2 core schema: an unquoted
 * `2026-05-14T08:00:00` or `yes` stays a string.
 *
 * Refused, before anything is built: a body over {@link MAX_DOCUMENT_BYTES} bytes of UTF-8, a
 * syntax error, a duplicate key, more than one document, nesting deeper than {@link MAX_DEPTH}
 * levels, an alias bomb (more than {@link MAX_ALIASES} aliases, or aliases that expand beyond the
 * `yaml` package's `maxAliasCount` guard), a recursive or unknown alias, a tag outside the core
 * schema, a non-scalar mapping key, the key `__proto__`, any parser warning, and a control
 * character (see `characters.ts`) anywhere in the text or in a string an escape wrote.
 *
 * @param source names the document in messages, e.g. `_vance/scheduler/nightly.yaml`.
 * @throws UrsaError `DOCUMENT_INVALID` whose message is `<source>: line L, column C: <reason>` (the
 *   position when known), with `field` (the key path, when known), `value` (the duplicate key,
 *   the byte count, or the refused character as `U+0000`) and `issues` (one issue: that field path and the message without the source).
 */
export function parseYamlDocument(text: string, source: string): unknown {
  const lines = new LineCounter();
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES) {
    refuse(source, lines, {
      reason: `the document is ${bytes} bytes; the limit is ${MAX_DOCUMENT_BYTES} bytes (64 KiB)`,
      value: bytes,
    });
  }
  const docs = parseAllDocuments(text, { ...OPTIONS, lineCounter: lines });
  // A control character anywhere in the text, a comment too, before the parser's own complaint.
  const raw = findForbiddenCharacter(text);
  if (raw !== undefined) {
    const refusal = {
      offset: raw.index,
      reason: `${forbiddenCharacterWords(raw)} is not allowed; allowed: ${ALLOWED_CHARACTERS}`,
      value: codePointName(raw.code),
      allowed: ALLOWED_CHARACTERS,
    };
    const first = 'empty' in docs ? undefined : docs[0];
    refuse(source, lines, first === undefined ? refusal : withKeyPath(first, refusal));
  }
  if ('empty' in docs) {
    const error = docs.errors[0];
    if (error !== undefined) refuse(source, lines, yamlReason(error, text, undefined));
    return null;
  }
  const [doc, second] = docs;
  if (doc === undefined) return null;
  for (const broken of docs) {
    const problem = broken.errors[0];
    if (problem !== undefined) refuse(source, lines, withKeyPath(broken, yamlReason(problem, text, broken)));
  }
  if (second !== undefined) {
    refuse(source, lines, {
      offset: second.range[0],
      reason: `the file holds ${docs.length} YAML documents; only one is allowed (remove the --- separator)`,
    });
  }
  const structure = inspectDocument(doc);
  if (structure !== undefined) refuse(source, lines, structure);
  const warning = doc.warnings[0];
  if (warning !== undefined) refuse(source, lines, withKeyPath(doc, yamlReason(warning, text, doc)));
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    const bomb = error instanceof ReferenceError && /alias count/i.test(error.message);
    refuse(source, lines, {
      reason: bomb
        ? `the aliases expand to too much data (more than the limit of ${MAX_ALIASES}); an alias bomb is refused`
        : 'the document cannot be turned into plain values',
    });
  }
  // What an escape (`"\0"`, `"\u001b"`) wrote, which the text itself does not show.
  const escaped = findForbiddenString(value);
  if (escaped !== undefined)
    refuse(source, lines, {
      field: escaped.field,
      reason: escaped.reason,
      value: codePointName(escaped.code),
      allowed: ALLOWED_CHARACTERS,
    });
  return value;
}

function withKeyPath(doc: Document, refusal: Refusal): Refusal {
  if (refusal.offset === undefined) return refusal;
  const field = keyPathAt(doc, refusal.offset)?.field;
  if (field === undefined) return refusal;
  return { ...refusal, field: refusal.topOnly === true ? topField(field) : field };
}
