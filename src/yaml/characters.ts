import { type RefusalCode, UrsaError } from '../errors/index.js';
import { appendField } from './field-path.js';

/**
 * The characters no string Ursa stores from a user may hold (decisions §6: bad input is refused
 * when written, not when it runs): the C0 controls but tab, line feed and carriage return
 * (U+0000–U+0008, U+000B, U+000C, U+000E–U+001F), DEL and the C1 controls (U+007F–U+009F), and
 * unpaired UTF-16 surrogates.
 *
 * Why these: NUL cannot reach a process (an environment variable or argument ends at it) and
 * PostgreSQL text cannot hold it, so a param holding one made every run fail. The other controls
 * are invisible in an editor and act on terminals and logs (ESC and U+009B start escape
 * sequences); no document needs them, and YAML allows none of them unescaped (its printable set
 * has NEL, U+0085, which is refused here with the other C1 controls). Tab, line feed and carriage
 * return are text. An unpaired surrogate is not a character: it cannot be written as UTF-8, so
 * what was stored would differ from what was checked.
 */
const FORBIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is allowed instead, for messages and the `allowed` of an error. */
export const ALLOWED_CHARACTERS =
  'any character except the control characters U+0000–U+001F (tab, line feed and carriage return are allowed) and U+007F–U+009F, and unpaired surrogates';

/** A forbidden character in a string: its index (UTF-16 code units, from 0) and its code. */
export interface ForbiddenCharacter {
  readonly index: number;
  readonly code: number;
}

/** The first forbidden character of `text`, or undefined when it has none. */
export function findForbiddenCharacter(text: string): ForbiddenCharacter | undefined {
  const match = FORBIDDEN.exec(text);
  return match === null ? undefined : { index: match.index, code: text.charCodeAt(match.index) };
}

/** `U+0000` for a character code. */
export function codePointName(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why a character is refused, in words: `the control character U+0000` or `an unpaired surrogate U+D800`. */
export function forbiddenCharacterWords(found: ForbiddenCharacter): string {
  const isSurrogate = found.code >= 0xd800 && found.code <= 0xdfff;
  return `${isSurrogate ? 'an unpaired surrogate' : 'the control character'} ${codePointName(found.code)}`;
}

/** A string of a value that holds a forbidden character, and where. */
export interface ForbiddenString extends ForbiddenCharacter {
  /** Field path of the string (`params.topic`, `tags[1]`; for a key, the path of the key itself). */
  readonly field: string;
  /** True when the string is a mapping key rather than a value. */
  readonly isKey: boolean;
  /** `params.topic holds the control character U+0000 at character 4; allowed: …`. */
  readonly reason: string;
}

/**
 * The first string of a plain value (what a YAML document or a JSON body becomes: objects,
 * arrays, strings, numbers, booleans, null), keys included, that holds a forbidden character, in
 * document order; undefined when there is none. Iterative, so no nesting overflows the stack.
 *
 * @param field the path of `value` itself (`` for a whole document, `params` for a body's params).
 */
export function findForbiddenString(value: unknown, field = ''): ForbiddenString | undefined {
  const stack: Array<{ value: unknown; field: string }> = [{ value, field }];
  while (stack.length > 0) {
    const next = stack.pop() as { value: unknown; field: string };
    const at = (text: string, path: string, isKey: boolean): ForbiddenString | undefined => {
      const found = findForbiddenCharacter(text);
      if (found === undefined) return undefined;
      const what = `${isKey ? 'the key ' : ''}${path === '' ? 'the document' : path}`;
      const reason = `${what} holds ${forbiddenCharacterWords(found)} at character ${found.index + 1}; allowed: ${ALLOWED_CHARACTERS}`;
      return { ...found, field: path, isKey, reason };
    };
    if (typeof next.value === 'string') {
      const found = at(next.value, next.field, false);
      if (found !== undefined) return found;
    } else if (Array.isArray(next.value)) {
      for (let i = next.value.length - 1; i >= 0; i--)
        stack.push({ value: next.value[i], field: appendField(next.field, i) });
    } else if (next.value !== null && typeof next.value === 'object') {
      const entries = Object.entries(next.value as Record<string, unknown>);
      for (const [key] of entries) {
        const found = at(key, appendField(next.field, key), true);
        if (found !== undefined) return found;
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        stack.push({ value: child, field: appendField(next.field, key) });
      }
    }
  }
  return undefined;
}

/**
 * Refuses a value that arrived as JSON (a request body, command-line params) by the rule every
 * document is held to: the first string holding a forbidden character is an `code` error with its
 * field path, the character as `U+0000` for `value`, and what is allowed.
 *
 * @throws UrsaError `code` (e.g. `ARGUMENT_INVALID`) when {@link findForbiddenString} finds one.
 */
export function refuseForbiddenString(code: RefusalCode, value: unknown, field: string): void {
  const found = findForbiddenString(value, field);
  if (found === undefined) return;
  throw new UrsaError(code, found.reason, {
    field: found.field,
    value: codePointName(found.code),
    allowed: ALLOWED_CHARACTERS,
    issues: [{ path: found.field, message: found.reason }],
  });
}
