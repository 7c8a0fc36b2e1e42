/** The words of the page's announcements (its live regions), and their pace. */

/** How long typing pauses before the problem count or a filter's count is announced. */
export const SETTLE_MS = 1000;

/** The short announcement of a document's problems: "2 problems in the document." */
export function problemsText(count: number): string {
  if (count === 0) return 'No problems: the document is valid.';
  return `${count} ${count === 1 ? 'problem' : 'problems'} in the document.`;
}

/** The short announcement of a question answered in the inbox: "Answered as ada." */
export function answeredText(by: string): string {
  return `Answered as ${by}.`;
}
