import { useEffect, useState } from 'preact/hooks';

/**
 * `value` once it has stayed the same for `ms` milliseconds (the first value at once). A live
 * region fed from it speaks when typing or filtering pauses, not on every keystroke, and says
 * nothing when the value comes back to what was last said.
 */
export function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const id = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(id);
  }, [value, ms]);
  return settled;
}

/** How long typing pauses before the problem count or a filter's count is announced. */
export const SETTLE_MS = 1000;

/** The short announcement of a document's problems: "2 problems in the document." */
export function problemsText(count: number): string {
  if (count === 0) return 'No problems: the document is valid.';
  return `${count} ${count === 1 ? 'problem' : 'problems'} in the document.`;
}
