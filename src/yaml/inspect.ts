import { type Document, isAlias, isCollection, isMap, isPair, isScalar, type Node } from 'yaml';
import { appendField, topField } from './field-path.js';
import { MAX_ALIASES, MAX_DEPTH } from './limits.js';

/** Tags a document may write explicitly: the YAML 1.2 core schema's, nothing that builds other objects. */
const CORE_TAGS = new Set(
  ['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`),
);

/** Why a parsed document may not be turned into plain values, and where. */
export interface StructureProblem {
  /** Character offset in the source where the problem starts. */
  readonly offset: number;
  /** Field path of the node, e.g. `params.model` or `tags[2]` (`` for the whole document). */
  readonly field: string;
  readonly reason: string;
}

interface Child {
  readonly node: Node;
  readonly field: string;
}

interface Frame extends Child {
  /** 1 for the top-level node. */
  readonly depth: number;
  /** Children, once the node is entered; `next` is the index of the one to visit next. */
  children?: Child[];
  next: number;
  /** Nesting levels at and below this node, aliases expanded (0 for a scalar). */
  height: number;
}

function tagProblem(node: Node, field: string): StructureProblem | undefined {
  const tag = isAlias(node) ? undefined : node.tag;
  if (tag === undefined || CORE_TAGS.has(tag)) return undefined;
  const shown = tag.replace('tag:yaml.org,2002:', '!!');
  return { offset: node.range?.[0] ?? 0, field, reason: `the tag ${shown} is not allowed` };
}

/**
 * Checks a parsed document's node tree before it becomes plain values, so that `toJS()` can
 * neither recurse too deep nor build anything but JSON-like data (decisions §6). Iterative: a
 * hostile document cannot overflow the stack here.
 *
 * Refused: nesting deeper than {@link MAX_DEPTH} levels (an alias counts with the depth of what it
 * expands), more than {@link MAX_ALIASES} aliases, an alias to an unknown anchor or to a node that
 * contains it (a cycle), an explicit tag outside the core schema (`!!binary`, `!!set`, `!foo`), a
 * mapping key that is not a plain value, two keys that become one JS property (`1` and `"1"`),
 * and the key `__proto__`.
 *
 * @returns the first problem in document order, or undefined when the tree is safe.
 */
export function inspectDocument(doc: Document): StructureProblem | undefined {
  const root = doc.contents;
  if (root === null) return undefined;
  // Anchor name → the latest node defined with it so far; YAML aliases refer to that one.
  const anchors = new Map<string, Node>();
  const heights = new Map<Node, number>();
  const open = new Set<Node>();
  let aliases = 0;

  const enter = (frame: Frame): StructureProblem | undefined => {
    const { node, field, depth } = frame;
    const at = (reason: string): StructureProblem => ({ offset: node.range?.[0] ?? 0, field, reason });
    if (isAlias(node)) {
      aliases += 1;
      if (aliases > MAX_ALIASES) return at(`more than ${MAX_ALIASES} aliases`);
      const target = anchors.get(node.source);
      if (target === undefined)
        return at(`the alias *${node.source} has no anchor &${node.source} before it`);
      if (open.has(target)) return at(`the alias *${node.source} refers to a node that contains it`);
      frame.height = heights.get(target) ?? 0;
      if (depth - 1 + frame.height > MAX_DEPTH) {
        const reason = `nesting deeper than ${MAX_DEPTH} levels once the alias *${node.source} is expanded`;
        return { ...at(reason), field: topField(field) };
      }
      return undefined;
    }
    const tagged = tagProblem(node, field);
    if (tagged !== undefined) return tagged;
    if (node.anchor !== undefined) anchors.set(node.anchor, node);
    if (!isCollection(node)) return undefined;
    // A path 64 levels deep helps nobody; the top-level field says where.
    if (depth > MAX_DEPTH)
      return { ...at(`nesting deeper than ${MAX_DEPTH} levels`), field: topField(field) };
    frame.height = 1;
    open.add(node);
    const children: Child[] = [];
    if (isMap(node)) {
      // `1:` and `"1":` are different YAML keys but one JS property: refuse them like duplicates.
      const names = new Set<string>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key as Node | null;
        let name = '';
        if (key !== null) {
          if (!isScalar(key)) {
            return { offset: key.range?.[0] ?? 0, field, reason: 'a mapping key must be a plain value' };
          }
          name = String(key.value ?? '');
          if (name === '__proto__') {
            return { offset: key.range?.[0] ?? 0, field, reason: 'the key "__proto__" is not allowed' };
          }
          if (names.has(name)) {
            return { offset: key.range?.[0] ?? 0, field, reason: `duplicate key ${JSON.stringify(name)}` };
          }
          names.add(name);
          const keyTag = tagProblem(key, appendField(field, name));
          if (keyTag !== undefined) return keyTag;
          if (key.anchor !== undefined) anchors.set(key.anchor, key);
        }
        const value = pair.value as Node | null;
        if (value !== null) children.push({ node: value, field: appendField(field, name) });
      }
    } else {
      node.items.forEach((item, index) => {
        if (item !== null) children.push({ node: item as Node, field: appendField(field, index) });
      });
    }
    frame.children = children;
    return undefined;
  };

  const stack: Frame[] = [{ node: root, field: '', depth: 1, next: 0, height: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.children === undefined && frame.next === 0) {
      const problem = enter(frame);
      if (problem !== undefined) return problem;
    }
    const child = frame.children?.[frame.next];
    if (child !== undefined) {
      frame.next += 1;
      stack.push({ ...child, depth: frame.depth + 1, next: 0, height: 0 });
      continue;
    }
    stack.pop();
    open.delete(frame.node);
    heights.set(frame.node, frame.height);
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.height = Math.max(parent.height, frame.height + 1);
  }
  return undefined;
}
