import { useEffect, useRef } from 'preact/hooks';

/**
 * Focuses `element` so that the next Tab starts from it: a heading or other static element gets
 * `tabindex="-1"` first (focusable by script, not a Tab stop). Returns whether it took the focus.
 */
export function focusElement(element: Element | null): boolean {
  if (!(element instanceof HTMLElement)) return false;
  if (element.tabIndex < 0 && !element.hasAttribute('tabindex')) element.tabIndex = -1;
  element.focus();
  return document.activeElement === element;
}

/**
 * On each change of `view` (a route, or the sign-in page) sets the document title and moves the
 * focus to `target` (a CSS selector, by default the view's `h1` in `main`), as a page load would
 * for a screen reader; not on the page's first view, where the browser starts at the top.
 */
export function useViewChange(view: string, title: string, target = 'main h1'): void {
  const first = useRef(true);
  useEffect(() => {
    document.title = title;
  }, [title]);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    focusElement(document.querySelector(target));
  }, [view, target]);
}

/** The skip link's action: the focus goes to the page's main content, the route stays. */
function skipToMain(event: Event): void {
  event.preventDefault();
  focusElement(document.getElementById('main'));
}

/**
 * The skip link's ref: its `#main` would otherwise change the hash, which the router reads as a
 * route (the scheduler list). A listener added twice is added once.
 */
export function skipLink(link: HTMLAnchorElement | null): void {
  link?.addEventListener('click', skipToMain);
}
