import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { SchedulerDefinition } from '../../src/scheduler/definition.js';
import { validateSchedulerDocument } from '../../src/scheduler/document.js';
import { isValidName, NAME_RULE } from '../../src/scheduler/name.js';
import { schedulerPath } from '../../src/scheduler/paths.js';

/**
 * Inline validation: the server's own validator (src/scheduler/document.ts, bundled) run on the
 * editor's text, each issue placed on the text it is about, so it can be shown in the gutter and
 * under the text as well as in the list.
 */

/** One issue with the range of the editor text it is about. */
export interface Placed {
  /** Field path as the server writes it (`cron`, `tags[1]`, `` for the whole document). */
  readonly path: string;
  readonly message: string;
  readonly from: number;
  readonly to: number;
  /** 1-based line of `from`. */
  readonly line: number;
  /** Where it came from: typed text (`local`) or the server's answer to a save (`server`). */
  readonly source: 'local' | 'server';
}

export interface Validation {
  readonly problems: readonly Placed[];
  readonly definition: SchedulerDefinition | undefined;
}

/** Splits a field path (`params["a.b"].c`, `tags[2]`) into its keys and indexes. */
export function pathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?([^.[]+)/g;
  for (let m = re.exec(path); m !== null; m = re.exec(path)) {
    if (m[1] !== undefined) out.push(Number(m[1]));
    else if (m[2] !== undefined) out.push(JSON.parse(m[2]) as string);
    else if (m[3] !== undefined) out.push(m[3]);
  }
  return out;
}

type Range = readonly [number, number];

/** The text range of the value (or, for an unknown field, the key) at `path`, if the text has it. */
function rangeOf(root: Node | null, path: string, unknownField: boolean): Range | undefined {
  let node: Node | null = root;
  let keyRange: Range | undefined;
  for (const segment of pathSegments(path)) {
    if (node === null) return keyRange;
    if (typeof segment === 'number' && isSeq(node)) {
      const item = node.items[segment] as Node | undefined;
      if (item === undefined) return rangeOfNode(node);
      node = item;
      keyRange = undefined;
      continue;
    }
    if (!isMap(node)) return rangeOfNode(node);
    const pair = node.items.find(
      (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
    );
    if (pair === undefined) return rangeOfNode(node);
    const key = pair.key as Node;
    keyRange = key.range ? [key.range[0], key.range[1]] : undefined;
    node = (pair.value as Node | null) ?? null;
    if (node === null) return keyRange;
  }
  if (unknownField && keyRange !== undefined) return keyRange;
  return rangeOfNode(node) ?? keyRange;
}

function rangeOfNode(node: Node | null): Range | undefined {
  const range = node?.range;
  if (range === undefined || range === null) return undefined;
  return [range[0], Math.max(range[1], range[0])];
}

/** A range that covers at least one character of the line at `offset`, inside the text. */
function visible(text: string, from: number, to: number): Range {
  const start = Math.max(0, Math.min(from, text.length));
  let end = Math.max(start, Math.min(to, text.length));
  if (end === start) {
    const lineEnd = text.indexOf('\n', start);
    end = lineEnd === -1 ? text.length : lineEnd;
  }
  return [start, end];
}

/** Places server or local issues on the text. */
export function place(
  text: string,
  issues: readonly { path: string; message: string }[],
  source: Placed['source'],
): Placed[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  const root = (doc.contents as Node | null) ?? null;
  return issues.map((issue) => {
    let range: Range | undefined;
    // The loader's messages start with the position: `line 3, column 7: …`.
    const at = /^line (\d+), column (\d+): /.exec(issue.message);
    if (at !== null) {
      const lineStart = lines.lineStarts[Number(at[1]) - 1] ?? 0;
      const offset = lineStart + Number(at[2]) - 1;
      range = [offset, offset];
    } else if (issue.path !== '') {
      range = rangeOf(root, issue.path, issue.message.startsWith('unknown field'));
    }
    const [from, to] = visible(text, range?.[0] ?? 0, range?.[1] ?? 0);
    return { path: issue.path, message: issue.message, from, to, line: lines.linePos(from).line, source };
  });
}

/** Checks the name a new scheduler is to be saved under (decisions §6). */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'a name is required';
  return isValidName(name) ? undefined : `not a valid name: a name is ${NAME_RULE}`;
}

/** Validates the editor text as the scheduler `name` with the server's validator. */
export function validateText(text: string, name: string): Validation {
  const usable = isValidName(name) ? name : 'draft';
  const result = validateSchedulerDocument(text, { name: usable, path: schedulerPath(usable) });
  if (result.ok) return { problems: [], definition: result.definition };
  return { problems: place(text, result.issues, 'local'), definition: undefined };
}
