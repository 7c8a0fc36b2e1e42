import type { ComponentChildren, VNode } from 'preact';
import { type Block, parseBlocks, parseInline, splitFrontMatter } from './markdown-parse.js';

/**
 * A small, safe renderer for run-log documents (spec §9a): YAML front matter becomes a table, the
 * Markdown body headings, lists, fenced code and paragraphs with `code` and **bold**. Everything
 * is built as Preact elements from text, never as HTML, so whatever a process printed is shown
 * as text and nothing in a log can run or load anything. The parsing is in `markdown-parse.ts`.
 */

function inline(text: string): ComponentChildren[] {
  return parseInline(text).map((piece) =>
    typeof piece === 'string' ? (
      piece
    ) : 'code' in piece ? (
      <code>{piece.code}</code>
    ) : (
      <strong>{piece.strong}</strong>
    ),
  );
}

function element(block: Block): VNode {
  switch (block.kind) {
    case 'code':
      return (
        <pre class="code">
          <code>{block.text}</code>
        </pre>
      );
    case 'heading': {
      // Inside the run detail, the log's headings sit below the page's own h2.
      const Tag = `h${Math.min(6, block.level + 2)}` as 'h3';
      return <Tag>{inline(block.text)}</Tag>;
    }
    case 'list':
      return (
        <ul>
          {block.items.map((item) => (
            <li>{inline(item)}</li>
          ))}
        </ul>
      );
    case 'paragraph':
      return <p>{inline(block.text)}</p>;
  }
}

/** The Markdown body as elements. */
export function markdownBlocks(body: string): VNode[] {
  return parseBlocks(body).map(element);
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
