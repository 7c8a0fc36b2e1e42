import { isMap, parseDocument } from 'yaml';

/**
 * A scheduler document's text with its top-level `enabled:` set to `enabled`, through the `yaml`
 * Document API (never a string edit), so the author's comments, key order and layout stay; the
 * text itself when it already says so or is not a mapping. What a pause and a resume write (issue #22).
 */
export function withEnabled(text: string, enabled: boolean): string {
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) return text;
  if (doc.get('enabled') === enabled) return text;
  doc.set('enabled', enabled);
  return doc.toString({ lineWidth: 0 });
}
