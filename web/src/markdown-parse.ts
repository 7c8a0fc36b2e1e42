import { parse } from 'yaml';

/**
 * The run-log reader of the page (spec §9a), without elements: front matter, then the few
 * Markdown blocks a run log has. It follows CommonMark where a run log's literal text relies on
 * it (a fenced block ends only at a fence at least as long as its opening one; a code span only at
 * a run of as many backticks), so text that the server wrote as literal stays literal here too.
 */

export interface Split {
  readonly front: Readonly<Record<string, unknown>> | undefined;
  readonly body: string;
}

/** Separates `---` front matter from the body; no front matter when it is missing or does not parse. */
export function splitFrontMatter(text: string): Split {
  // The closing `---` is a line of its own: `---x` is not one.
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  if (match === null) return { front: undefined, body: text };
  try {
    const value = parse(match[1] as string, { schema: 'core' }) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { front: undefined, body: text };
    return { front: value as Record<string, unknown>, body: text.slice(match[0].length) };
  } catch {
    return { front: undefined, body: text };
  }
}

/** One block of a run-log body. */
export type Block =
  | { readonly kind: 'heading'; readonly level: number; readonly text: string }
  | { readonly kind: 'code'; readonly text: string }
  | { readonly kind: 'list'; readonly items: readonly string[] }
  | { readonly kind: 'paragraph'; readonly text: string };

/** One piece of a line of text: plain text, a code span or bold text. */
export type Inline = string | { readonly code: string } | { readonly strong: string };

const OPENING_FENCE = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/;
const LIST_ITEM = /^\s*[-*]\s+/;

/** True when `line` closes a fenced block opened with `marker` (CommonMark: same character, at least as long, nothing after). */
function closes(line: string, marker: string): boolean {
  const match = /^ {0,3}(`+|~+)[ \t]*$/.exec(line);
  const run = match?.[1];
  return run !== undefined && run[0] === marker[0] && run.length >= marker.length;
}

/** The blocks of a Markdown body: ATX headings, fenced code, `-`/`*` lists and paragraphs. */
export function parseBlocks(body: string): Block[] {
  const lines = body.split(/\r\n|\r|\n/);
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const fence = OPENING_FENCE.exec(line);
    if (fence !== null) {
      const marker = fence[1] as string;
      const code: string[] = [];
      i++;
      while (i < lines.length && !closes(lines[i] as string, marker)) code.push(lines[i++] as string);
      i++;
      blocks.push({ kind: 'code', text: code.join('\n') });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      blocks.push({ kind: 'heading', level: (heading[1] as string).length, text: heading[2] as string });
      i++;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: string[] = [];
      while (i < lines.length && LIST_ITEM.test(lines[i] as string))
        items.push((lines[i++] as string).replace(LIST_ITEM, ''));
      blocks.push({ kind: 'list', items });
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      (lines[i] as string).trim() !== '' &&
      !/^(#{1,6}\s|\s*[-*]\s)/.test(lines[i] as string) &&
      !OPENING_FENCE.test(lines[i] as string)
    ) {
      para.push(lines[i++] as string);
    }
    blocks.push({ kind: 'paragraph', text: para.join(' ') });
  }
  return blocks;
}

/** Code spans (a run of backticks up to the next run of exactly as many) and `**bold**`. */
const INLINE = /(?<!`)(`+)(?!`)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*/g;

/** The pieces of one line of text. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const code = m[2];
    if (code !== undefined) {
      // CommonMark strips one space (U+0020) on each side when both are there and it is not all spaces.
      const strip = code.length >= 2 && code.startsWith(' ') && code.endsWith(' ') && !/^ *$/.test(code);
      out.push({ code: strip ? code.slice(1, -1) : code });
    } else out.push({ strong: m[3] as string });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
