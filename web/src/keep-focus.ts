import { useEffect } from 'preact/hooks';
import { focusElement } from './view-focus.js';

/**
 * Keeps the keyboard's place across an action. A button that is disabled while its request runs
 * (Save, Reload…) loses the focus to the page's body, and so does a dialog's button when the
 * dialog closes onto a disabled opener; a keyboard or screen-reader user then starts again from
 * the top of the page. `focusOrigin` notes where the action started (for a button in a dialog:
 * the button that opened the dialog), `restoreFocus` puts the focus back there once the page has
 * re-rendered, only if the focus was dropped.
 */

const openers = new WeakMap<HTMLDialogElement, HTMLElement>();

// A modal dialog takes the focus from the element that opened it: that element is its opener.
document.addEventListener('focusin', (event) => {
  const dialog = event.target instanceof Element ? event.target.closest('dialog') : null;
  const from = event.relatedTarget;
  if (dialog === null || !(from instanceof HTMLElement) || dialog.contains(from)) return;
  openers.set(dialog, from);
});

/** The element an action starting now should give the focus back to. */
export function focusOrigin(): HTMLElement | undefined {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || active === document.body) return undefined;
  const dialog = active.closest('dialog');
  return dialog === null ? active : (openers.get(dialog) ?? active);
}

/**
 * Whether the focus has dropped to the page itself, or is about to: Chrome moves it to the body
 * at the next frame when its element was disabled, removed or hidden (a closed dialog's field).
 */
export function focusDropped(): boolean {
  const active = document.activeElement;
  if (active === null || active === document.body) return true;
  if (!active.isConnected || active.closest('dialog:not([open])') !== null) return true;
  return (active as HTMLButtonElement).disabled === true;
}

/**
 * After the current render (a macrotask, Preact renders in a microtask): when the focus has
 * dropped, it goes to `origin` if that is still on the page and enabled, else to `fallback` (a
 * CSS selector, by default the view's heading).
 */
export function restoreFocus(origin: HTMLElement | undefined, fallback = 'main h1'): void {
  window.setTimeout(() => {
    if (!focusDropped()) return;
    const usable =
      origin?.isConnected === true && !(origin as HTMLButtonElement).disabled && focusElement(origin);
    if (!usable) focusElement(document.querySelector(fallback));
  }, 0);
}

/**
 * For a component whose render can remove the focused element (Stop once its run ended, a row
 * of the trash once restored): when a render took away the element that had the focus, the focus
 * goes to `fallback` (a CSS selector, by default the view's heading). Focus left on the body by
 * a click elsewhere stays where it is.
 */
export function useFocusKept(fallback = 'main h1'): void {
  // Read while rendering: before the render's changes reach the page.
  const before = document.activeElement;
  useEffect(() => {
    if (before === null || before === document.body || before.isConnected || !focusDropped()) return;
    focusElement(document.querySelector(fallback));
  });
}
