/**
 * Redaction of secret header values (issue #19): from each value the forms a server may echo it
 * back in are derived, and every one of them is replaced by `***` in whatever the engine stores or
 * shows. Derived by construction, so an echo in another encoding of the same value is covered too.
 */

/** What a secret form is replaced with. */
export const REDACTED = '***';

/**
 * Shortest derived form that is redacted, in characters. A derived form (an encoding, a part of
 * the value) shorter than this is not, since it would redact ordinary text; the whole value is
 * always redacted, case-sensitively when it is this short or shorter.
 */
export const MIN_DERIVED_FORM_CHARS = 6;

/** `Bearer abc`, `Basic dXNlcjpwdw==`, `Token abc`: an auth scheme word, white space, the credential. */
const SCHEME_CREDENTIAL = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S(?:.*\S)?)\s*$/su;

/** The value, and the parts of it a server may echo alone: the credential after a scheme word, `user:pass` and `pass` of Basic. */
function secretParts(value: string): Set<string> {
  const parts = new Set([value]);
  const match = SCHEME_CREDENTIAL.exec(value);
  const credential = match?.[2];
  if (credential === undefined) return parts;
  parts.add(credential);
  const decoded = Buffer.from(credential, 'base64');
  const userPass = decoded.toString('utf8');
  if (
    decoded.toString('base64').replace(/=+$/u, '') === credential.replace(/=+$/u, '') &&
    userPass.includes(':')
  ) {
    parts.add(userPass);
    parts.add(userPass.slice(userPass.indexOf(':') + 1));
  }
  return parts;
}

/**
 * Base64 texts a longer base64 text holds wherever `bytes` lie in it: for each of the three
 * alignments of the value to a 3-byte group, the characters that encode only its bytes. Together
 * they leave at most the first and last two bytes of the value, in part, in the surrounding text.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms = [bytes.toString('base64'), bytes.toString('base64').replace(/=+$/u, '')];
  for (let skip = 0; skip < 3; skip++) {
    const whole = Math.floor((bytes.length - skip) / 3) * 3;
    if (whole > 0) forms.push(bytes.subarray(skip, skip + whole).toString('base64'));
  }
  return forms.flatMap((form) => [form, form.replace(/\+/gu, '-').replace(/\//gu, '_')]);
}

/** The UTF-8 bytes of `text` as two hex digits each. */
function hexBytes(text: string): string[] {
  return [...Buffer.from(text, 'utf8')].map((b) => b.toString(16).padStart(2, '0'));
}

/**
 * A pattern for one character of a secret (a code point) in any encoding a server may write it
 * in, each character on its own, so that echoes mixing encodings are matched too: the character in
 * either case (`ß` as `SS` as well); JSON's `\uXXXX` (and its short escapes, `\/`); percent-encoded
 * once or twice (`%2F`, `%252F`); `+` for a space (forms); quoted-printable (`=2F`); hex; an HTML
 * character reference (`&#x2F;`, `&#47;`, and the named ones for `&<>"'`). Hex digits match in
 * either case (the pattern is case-insensitive). Returns the pattern and its longest match, in bytes.
 */
function charPattern(c: string): { source: string; longest: number } {
  const bytes = hexBytes(c);
  const units = [...c].flatMap((ch) =>
    ch.length === 2 ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [ch.charCodeAt(0)],
  );
  const point = c.codePointAt(0) ?? 0;
  const named: Record<string, string[]> = {
    '&': ['&amp;'],
    '<': ['&lt;'],
    '>': ['&gt;'],
    '"': ['&quot;'],
    "'": ['&apos;'],
  };
  const literals = new Set([c, c.toUpperCase(), c.toLowerCase(), ...(named[c] ?? [])]);
  const json = JSON.stringify(c).slice(1, -1);
  literals.add(json);
  if (c === '/') literals.add('\\/');
  if (c === ' ') literals.add('+');
  literals.add(units.map((u) => `\\u${u.toString(16).padStart(4, '0')}`).join(''));
  literals.add(bytes.join(''));
  literals.add(bytes.map((b) => `=${b}`).join(''));
  const alternatives = [...literals].map(escapeRegExp);
  // Percent-encoding, once or twice, and character references with up to four leading zeros.
  alternatives.push(bytes.map((b) => `%(?:25)?${b}`).join(''));
  alternatives.push(`&#x0{0,4}${point.toString(16)};`, `&#0{0,4}${point};`);
  const longest = Math.max(
    ...[...literals].map((l) => Buffer.byteLength(l)),
    bytes.length * 5,
    `&#x0000${point.toString(16)};`.length,
    `&#0000${point};`.length,
  );
  return { source: `(?:${alternatives.join('|')})`, longest };
}

/** A pattern for `part` with every character in any of its encodings ({@link charPattern}). */
function perCharacterPattern(part: string): { source: string; longest: number } {
  const chars = [...part].map(charPattern);
  return {
    source: chars.map((c) => c.source).join(''),
    longest: chars.reduce((sum, c) => sum + c.longest, 0),
  };
}

/** The base64 encodings of `part` (which no per-character pattern can match). */
function base64Encodings(part: string): string[] {
  const json = JSON.stringify(part).slice(1, -1);
  const latin1 = Buffer.from(part, 'latin1');
  const utf8 = Buffer.from(part, 'utf8');
  return [
    ...base64Forms(latin1),
    ...(utf8.equals(latin1) ? [] : base64Forms(utf8)),
    // A JSON document that holds the secret, base64-encoded as a whole.
    ...(json === part ? [] : base64Forms(Buffer.from(json, 'utf8'))),
  ];
}

/** `text` as a literal in a pattern with the `u` flag (which refuses needless escapes such as `\-`). */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/gu, '\\$&');
}

/** The secret header values of one run, and how to keep them out of what is stored or shown. */
export class Secrets {
  readonly #patterns: readonly RegExp[];
  readonly #longestBytes: number;

  /** @param values The secret values sent; empty ones are ignored. */
  constructor(values: readonly string[]) {
    const patterns = new Map<string, { source: string; flags: string; longest: number }>();
    const add = (source: string, flags: string, longest: number) =>
      patterns.set(`${flags} ${source}`, { source, flags, longest });
    for (const value of values) {
      if (value === '') continue;
      for (const part of secretParts(value)) {
        if (part.length >= MIN_DERIVED_FORM_CHARS) {
          const { source, longest } = perCharacterPattern(part);
          add(source, 'giu', longest);
        }
        for (const text of base64Encodings(part)) {
          if (text.length >= MIN_DERIVED_FORM_CHARS) add(escapeRegExp(text), 'giu', text.length);
        }
      }
      if (value.length < MIN_DERIVED_FORM_CHARS) add(escapeRegExp(value), 'gu', Buffer.byteLength(value));
    }
    this.#patterns = [...patterns.values()].map((p) => new RegExp(p.source, p.flags));
    this.#longestBytes = Math.max(0, ...[...patterns.values()].map((p) => p.longest));
  }

  /** How many bytes past a cut a secret form that starts before the cut may reach, at most. */
  get longestBytes(): number {
    return this.#longestBytes;
  }

  /** `text` with every secret form replaced by `***` (overlapping forms merged into one). */
  redact(text: string): string {
    return this.#replace(text, text.length);
  }

  /**
   * The first `limit` bytes of `window` (cut back to a character boundary) as UTF-8, each secret
   * form replaced by `***`. `window` must hold `limit + longestBytes` bytes when the body had that
   * many, so a secret running across the cut is seen whole and never shows in part.
   */
  excerpt(window: Buffer, limit: number): string {
    const head = window.subarray(0, utf8Cut(window, limit)).toString('utf8');
    const text = window.toString('utf8');
    return text.startsWith(head) ? this.#replace(text, head.length) : this.redact(head);
  }

  /** `text` up to `end` with each match replaced; a match that runs past `end` ends the result. */
  #replace(text: string, end: number): string {
    const marks: Array<readonly [number, number]> = [];
    for (const pattern of this.#patterns) {
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        marks.push([m.index, m.index + m[0].length]);
        pattern.lastIndex = m.index + 1;
      }
    }
    marks.sort((a, b) => a[0] - b[0]);
    let result = '';
    let pos = 0;
    for (const [start, stop] of marks) {
      if (start >= end) break;
      if (stop <= pos) continue;
      if (start >= pos) result += text.slice(pos, start) + REDACTED;
      pos = stop;
    }
    return pos < end ? result + text.slice(pos, end) : result;
  }
}

/** The largest length up to `limit` that does not end inside a UTF-8 character of `bytes`. */
function utf8Cut(bytes: Buffer, limit: number): number {
  if (bytes.length <= limit) return bytes.length;
  let cut = limit;
  // At most three continuation bytes (10xxxxxx) follow the lead byte of a character.
  while (cut > 0 && limit - cut < 3 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return cut;
}
