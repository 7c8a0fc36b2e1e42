import { describe, expect, it } from 'vitest';
import { lineDiff } from '../../web/src/line-diff.js';

// issue #23 item 3: the editor's diff of an earlier version against the current one.

describe('the line diff of two versions', () => {
  it('keeps common lines and marks a changed line as deleted then added', () => {
    expect(lineDiff('a\nb\nc\n', 'a\nB\nc\n')).toEqual([
      { op: 'same', text: 'a' },
      { op: 'del', text: 'b' },
      { op: 'add', text: 'B' },
      { op: 'same', text: 'c' },
    ]);
  });

  it('finds lines added at the end and removed at the start', () => {
    expect(lineDiff('x\na\nb\n', 'a\nb\nc\n')).toEqual([
      { op: 'del', text: 'x' },
      { op: 'same', text: 'a' },
      { op: 'same', text: 'b' },
      { op: 'add', text: 'c' },
    ]);
  });

  it('says nothing changed for equal texts, and a final newline starts no empty line', () => {
    expect(lineDiff('a\nb', 'a\nb\n')).toEqual([
      { op: 'same', text: 'a' },
      { op: 'same', text: 'b' },
    ]);
    expect(lineDiff('', '')).toEqual([]);
  });

  it('keeps the longest common run of lines', () => {
    const diff = lineDiff('a\nb\nc\nd\n', 'b\nc\nd\ne\n');
    expect(diff.filter((l) => l.op === 'same').map((l) => l.text)).toEqual(['b', 'c', 'd']);
    expect(diff.filter((l) => l.op !== 'same')).toEqual([
      { op: 'del', text: 'a' },
      { op: 'add', text: 'e' },
    ]);
  });
});
