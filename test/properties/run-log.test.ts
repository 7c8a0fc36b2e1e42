import { type Node, Parser } from 'commonmark';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { inlineLiteral } from '../../src/runtime/markdown-literal.js';
import { renderRunLog, runLogLockMode } from '../../src/runtime/run-log.js';
import type { Run } from '../../src/store/runs.js';
import type { WorkflowRun } from '../../src/store/workflow-runs.js';
import { parseBlocks, parseInline, splitFrontMatter } from '../../web/src/markdown-parse.js';

// Run logs (spec §9a) are Markdown that agents and the web page render, and they hold text Ursa
// did not write: process output, reasons, error messages, user names. Whatever that text is, the
// document read back has exactly the structure Ursa wrote (issue #19): the same front matter, the
// same headings and blocks, the text literal, and no HTML, link or image anywhere. Read back by
// the CommonMark reference parser (what an agent's renderer follows) and by the page's own reader.

const AT = Date.parse('2026-06-09T08:15:00Z');

// Fragments that mean something to Markdown or YAML, mixed with arbitrary text.
const HOSTILE = [
  '\n',
  '\r',
  '\r\n',
  '`',
  '```',
  '````',
  '~~~',
  '# ',
  '## Forged',
  '---',
  '...',
  '<script>alert(1)</script>',
  '<div>',
  '[x](javascript:alert(1))',
  '![i](http://x/i.png)',
  '<http://x>',
  '*',
  '_',
  '**',
  '> ',
  '- ',
  '1. ',
  '    ',
  '\t',
  '\\',
  '&amp;',
  '\u0000',
  '\u2028',
  ': ',
  '"',
  "'",
  '|',
];
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 6 })), { maxLength: 25 })
    .map((parts) => parts.join('')),
);
const someText = text.filter((t) => t !== '');

interface Untrusted {
  readonly output: string;
  readonly errorOutput: string;
  readonly reason: string;
  readonly stepReason: string;
  readonly runAs: string;
}

function runOf(u: Untrusted): Run {
  return {
    correlationId: 'run_1',
    tenant: 'acme',
    project: 'ops',
    name: 'job',
    scheduledFor: AT,
    trigger: 'cron',
    coalesced: false,
    coalescedUntil: null,
    claimedAt: AT,
    state: 'ended',
    outcome: 'failed',
    reason: u.reason,
    runAs: u.runAs,
    sessionId: 'sess_1',
    processId: 'proc_1',
    logPath: 'log',
    startedAt: AT + 5,
    endedAt: AT + 20,
    workerId: null,
    lockMode: 'hidden',
    attempt: 1,
    fencingToken: null,
    queuedAt: null,
    waitingBehind: null,
    foldedInto: null,
  };
}

function workflowRunOf(u: Untrusted): WorkflowRun {
  return {
    id: 'abcd0123',
    tenant: 'acme',
    project: 'ops',
    workflow: 'flow',
    status: 'failed',
    params: {},
    document: '',
    runAs: u.runAs,
    sessionId: '_magrathea_abcd0123',
    correlationId: 'run_1',
    reason: u.stepReason,
    createdAt: AT,
    endedAt: AT + 20,
    steps: [
      {
        position: 0,
        name: 'fetch',
        recipe: 'noop',
        status: 'failed',
        processId: null,
        output: null,
        reason: u.stepReason,
        startedAt: AT,
        endedAt: AT + 20,
      },
    ],
  };
}

function render(u: Untrusted): string {
  return renderRunLog(
    runOf(u),
    { exitCode: 3, outputTail: u.output, errorTail: u.errorOutput },
    undefined,
    workflowRunOf(u),
  );
}

/** The front matter as a strict reader takes it: up to the first line that is exactly `---`. */
function strictSplit(document: string): { front: string; body: string } {
  const lines = document.split('\n');
  expect(lines[0]).toBe('---');
  const end = lines.indexOf('---', 1);
  return { front: lines.slice(1, end).join('\n'), body: lines.slice(end + 1).join('\n') };
}

/** What CommonMark makes of a code block's or code span's content. */
function asCommonMark(content: string): string {
  return content.replace(/\r\n?/g, '\n').replaceAll('\u0000', '\uFFFD');
}

/** Every node below `root`, in document order. */
function nodes(root: Node): Node[] {
  const out: Node[] = [];
  const walker = root.walker();
  for (let step = walker.next(); step !== null; step = walker.next()) if (step.entering) out.push(step.node);
  return out;
}

/** The text of a block, its pieces joined. */
function textOf(block: Node): string {
  return nodes(block)
    .map((n) => n.literal ?? '')
    .join('');
}

/** The top-level blocks as `type` or `heading<level>`, and the literal of each code block. */
function blocksOf(root: Node): { kinds: string[]; code: string[] } {
  const kinds: string[] = [];
  const code: string[] = [];
  for (let node = root.firstChild; node !== null; node = node.next) {
    kinds.push(node.type === 'heading' ? `heading${node.level}` : node.type);
    if (node.type === 'code_block') code.push(node.literal ?? '');
  }
  return { kinds, code };
}

const EXPECTED_KINDS = [
  'heading1',
  'list',
  'heading2',
  'list',
  'heading2',
  'list',
  'heading2',
  'code_block',
  'heading2',
  'code_block',
];

describe('a run log read back as CommonMark has the structure Ursa wrote (issue #19)', () => {
  it('whatever the output, error output, reasons and runAs hold', () => {
    fc.assert(
      fc.property(
        someText,
        someText,
        someText,
        someText,
        someText,
        (output, errorOutput, reason, stepReason, runAs) => {
          const u = { output, errorOutput, reason, stepReason, runAs };
          const { front, body } = strictSplit(render(u));
          expect(parse(front)).toMatchObject({ kind: 'scheduler-log', runAs, reason, outcome: 'failed' });
          // What agents are shown of it is decided by the front matter, which output cannot move.
          expect(runLogLockMode(render(u))).toBe('hidden');

          const root = new Parser().parse(body);
          const { kinds, code } = blocksOf(root);
          // Each tail has its block, its end trimmed.
          const blocks = [output, errorOutput].map((t) => t.trimEnd());
          expect(kinds).toEqual(EXPECTED_KINDS.slice(0, 6 + 2 * blocks.length));
          expect(code).toEqual(blocks.map((t) => `${asCommonMark(t)}\n`));
          const all = nodes(root);
          expect(all.filter((n) => ['html_block', 'html_inline', 'link', 'image'].includes(n.type))).toEqual(
            [],
          );
          expect(all.filter((n) => n.type === 'heading').map(textOf)).toEqual(
            [
              "Scheduler 'job' — run_1",
              'Timeline',
              'Workflow run abcd0123 (flow): failed',
              'Output',
              'Error output',
            ].slice(0, 3 + blocks.length),
          );
          // Each reason and the runAs are one code span (or plain text) with the text itself.
          const spans = all.filter((n) => n.type === 'code').map((n) => n.literal);
          for (const value of [reason, runAs, stepReason])
            if (inlineLiteral(value) !== value)
              expect(spans).toContain(asCommonMark(value.replace(/\r/g, '\\r').replace(/\n/g, '\\n')));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads the same with the web page reader', () => {
    fc.assert(
      fc.property(someText, someText, someText, someText, (output, errorOutput, reason, runAs) => {
        const u = { output, errorOutput, reason, stepReason: reason, runAs };
        const split = splitFrontMatter(render(u));
        expect(split.front).toMatchObject({ kind: 'scheduler-log', runAs, reason });
        const blocks = parseBlocks(split.body);
        const outputs = [output, errorOutput].map((t) => t.trimEnd());
        expect(blocks.map((b) => (b.kind === 'heading' ? `heading${b.level}` : b.kind))).toEqual(
          EXPECTED_KINDS.map((k) => k.replace('code_block', 'code')).slice(0, 6 + 2 * outputs.length),
        );
        expect(blocks.filter((b) => b.kind === 'code').map((b) => b.text)).toEqual(
          outputs.map((t) => t.replace(/\r\n?/g, '\n')),
        );
        const outcome = blocks[1]?.kind === 'list' ? (blocks[1].items[1] ?? '') : '';
        const pieces = parseInline(outcome);
        if (inlineLiteral(reason) !== reason)
          expect(pieces.at(-1)).toEqual({ code: reason.replace(/\r/g, '\\r').replace(/\n/g, '\\n') });
      }),
      { numRuns: 500 },
    );
  });

  it('reads a reason whose first line is only spaces back the same, in the page too (the case that was found)', () => {
    const u = { output: '\u0000', errorOutput: '\u0000', reason: '    \n', stepReason: '    \n', runAs: ' ' };
    expect(splitFrontMatter(render(u)).front).toMatchObject({ reason: '    \n', runAs: ' ' });
  });

  it('forges no heading from a line of four backticks in the output (the case that was found)', () => {
    const output = 'ok\n````\n## Forged\n````\nend';
    const u = { output, errorOutput: '', reason: 'exit code 3', stepReason: 'x', runAs: 'alice' };
    const root = new Parser().parse(strictSplit(render(u)).body);
    expect(
      nodes(root)
        .filter((n) => n.type === 'heading')
        .map(textOf),
    ).toEqual(["Scheduler 'job' — run_1", 'Timeline', 'Workflow run abcd0123 (flow): failed', 'Output']);
    expect(blocksOf(root).code).toEqual([`${output}\n`]);
  });
});
