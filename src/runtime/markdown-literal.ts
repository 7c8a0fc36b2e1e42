/**
 * Untrusted text (process output, error messages, reasons, user names) embedded in a Markdown
 * document Ursa writes (the run logs of spec §9a) so that CommonMark reads it back as literal text
 * and nothing else: no heading, list item, link, HTML or end of the block it sits in. Safe by
 * construction, whatever the text holds, rather than by filtering what is known to be dangerous.
 */

/** Length of the longest run of backticks in `text` (0 when it has none). */
function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}

/**
 * The lines of a fenced code block holding `text` verbatim: a fence of backticks longer than any
 * run of backticks in `text` (at least three). CommonMark closes a fenced block only at a line of
 * at least as many backticks as the opening fence, so no line of `text` can close it, and inside
 * the block every line (a `#`, a `---`, `<script>`) is literal.
 *
 * @returns `[fence, text, fence]`, to be joined with line feeds.
 */
export function codeBlock(text: string): [string, string, string] {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  return [fence, text, fence];
}

/** Text with no character that means anything to CommonMark inline (and no line ending). */
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9.:@-]*$/;
/** An underscore between two letters or digits, which CommonMark never reads as emphasis. */
const INTRAWORD_UNDERSCORE = /(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])/g;

/**
 * `text` for the middle of one Markdown line: as it is when it is a plain word (a name, an id:
 * letters, digits, `.:@-` and an underscore inside a word, as in `user_alice`), else a code span, which CommonMark shows literally. The span's
 * delimiters are one backtick longer than the longest run of backticks inside, so none inside can
 * end it, and padded with a space (CommonMark strips one on each side). The empty text stays empty. A line ending would start
 * a new block before any inline rule applies, so CR and LF are written as the two characters
 * `\r` and `\n`.
 */
export function inlineLiteral(text: string): string {
  if (text === '' || PLAIN.test(text.replace(INTRAWORD_UNDERSCORE, ''))) return text;
  const oneLine = text.replace(/\r/g, '\\r').replace(/\n/g, '\\n');
  const ticks = '`'.repeat(longestBacktickRun(oneLine) + 1);
  // Only spaces are not stripped, so they need no padding.
  const pad = /^ *$/.test(oneLine) ? '' : ' ';
  return `${ticks}${pad}${oneLine}${pad}${ticks}`;
}
