import type { ComponentChildren, VNode } from 'preact';
import { parse } from 'yaml';

/**
 * A small, safe renderer for run-log documents (spec §9a): YAML front matter becomes a table, the
 * Markdown body headings, lists, fenced code and paragraphs with `code` and **bold**. Everything
 * is built as Preact elements from text, never as HTML, so whatever a process printed is shown
 * as text and nothing in a log can run or load anything.
 */

export interface Split {
  readonly front: Readonly<Record<string, unknown>> | undefined;
  readonly body: string;
}

/** Separates `---` front matter from the body; no front matter when it is missing or does not parse. */
export function splitFrontMatter(text: string): Split {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
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

function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(m[1] !== undefined ? <code>{m[1]}</code> : <strong>{m[2]}</strong>);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The Markdown body as elements. */
export function markdownBlocks(body: string): VNode[] {
  const lines = body.replace(/\r\n/g, '\n').split('\n');
  const blocks: VNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const fence = /^(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      const marker = fence[1] as string;
      const code: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).startsWith(marker)) code.push(lines[i++] as string);
      i++;
      blocks.push(
        <pre class="code">
          <code>{code.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      // Inside the run detail, the log's headings sit below the page's own h2.
      const level = Math.min(6, (heading[1] as string).length + 2);
      const Tag = `h${level}` as 'h3';
      blocks.push(<Tag>{inline(heading[2] as string)}</Tag>);
      i++;
      continue;
    }
    if (/^\s*[-*]\s+/.test(line)) {
      const items: VNode[] = [];
      while (i < lines.length && /^\s*[-*]\s+/.test(lines[i] as string)) {
        items.push(<li>{inline((lines[i] as string).replace(/^\s*[-*]\s+/, ''))}</li>);
        i++;
      }
      blocks.push(<ul>{items}</ul>);
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
      !/^(#{1,6}\s|`{3,}|~{3,}|\s*[-*]\s)/.test(lines[i] as string)
    ) {
      para.push(lines[i++] as string);
    }
    blocks.push(<p>{inline(para.join(' '))}</p>);
  }
  return blocks;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A run log: front matter as a table, then the body. */
export function RunLog({ text }: { text: string }) {
  const { front, body } = splitFrontMatter(text);
  return (
    <div class="run-log">
      {front !== undefined && (
        <table class="front-matter">
          <caption>Front matter</caption>
          <tbody>
            {Object.entries(front).map(([key, value]) => (
              <tr key={key}>
                <th scope="row">{key}</th>
                <td>{cell(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {markdownBlocks(body)}
    </div>
  );
}
