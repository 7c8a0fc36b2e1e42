import { type Document, isMap, isPair, isScalar, isSeq, type Node } from 'yaml';
import { appendField } from './field-path.js';

function covers(node: Node | null, offset: number): boolean {
  const range = node?.range;
  return (
    range !== undefined && range !== null && range[0] <= offset && offset < Math.max(range[2], range[0] + 1)
  );
}

/** What {@link keyPathAt} found: the field path, and the key itself when the offset is on a key. */
export interface KeyAt {
  readonly field: string;
  readonly key: string | undefined;
}

/**
 * The field path (`params.model`, `tags[1]`) of the innermost key or value that covers the
 * character `offset`, or undefined when none does (e.g. the offset is in a comment). Iterative,
 * so a deeply nested document cannot overflow the stack.
 */
export function keyPathAt(doc: Document, offset: number): KeyAt | undefined {
  let found: KeyAt | undefined;
  const stack: Array<{ node: Node; field: string }> = [];
  if (doc.contents !== null) stack.push({ node: doc.contents as Node, field: '' });
  while (stack.length > 0) {
    const { node, field } = stack.pop() as { node: Node; field: string };
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key as Node | null;
        const name = isScalar(key) ? String(key.value ?? '') : '?';
        const child = appendField(field, name);
        if (covers(key, offset)) return { field: child, key: name };
        const value = pair.value as Node | null;
        if (value !== null && covers(value, offset)) {
          found = { field: child, key: undefined };
          stack.push({ node: value, field: child });
        }
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        if (item !== null && covers(item as Node, offset)) {
          found = { field: appendField(field, index), key: undefined };
          stack.push({ node: item as Node, field: found.field });
        }
      });
    }
  }
  return found;
}
