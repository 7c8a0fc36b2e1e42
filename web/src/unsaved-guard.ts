/**
 * The unsaved-changes guard: while a view holds edits not saved, leaving it asks first — a route
 * change inside the page (a link, the back button) with `confirm`, a reload or a closed tab with
 * the browser's own `beforeunload` question.
 */

let question: string | undefined;

function onBeforeUnload(event: BeforeUnloadEvent): void {
  if (question === undefined) return;
  event.preventDefault();
  // Older browsers ask only when returnValue is set; its text is not shown any more.
  event.returnValue = '';
}

/** Sets (a question) or clears (undefined) what leaving the current view must ask. */
export function setUnsaved(text: string | undefined): void {
  if (text !== undefined && question === undefined) window.addEventListener('beforeunload', onBeforeUnload);
  if (text === undefined && question !== undefined)
    window.removeEventListener('beforeunload', onBeforeUnload);
  question = text;
}

/**
 * Whether the page may follow a hash change away from `from` (the hash it showed): yes when
 * nothing is unsaved or the person confirms; else the address goes back to `from` (without a
 * new history entry) and the view stays.
 */
export function allowRouteChange(from: string): boolean {
  if (question === undefined || window.confirm(question)) {
    setUnsaved(undefined);
    return true;
  }
  const { pathname, search } = window.location;
  window.history.replaceState(window.history.state, '', `${pathname}${search}${from}`);
  return false;
}
