import type { ComponentChildren, RefObject } from 'preact';
import { useCallback, useEffect, useRef } from 'preact/hooks';

/** A modal `<dialog>` and the means to open and close it. */
export interface Modal {
  readonly ref: RefObject<HTMLDialogElement | null>;
  /** Opens it modal, remembering what had the focus (the opener) to give it back on close. */
  readonly open: () => void;
  readonly close: () => void;
}

/**
 * A modal dialog that gives the focus back to its opener however it closes (a button, a submit,
 * Escape — the browser's own `cancel` of a modal dialog), so keyboard users are not left on the
 * page's body.
 */
export function useModal(): Modal {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    const restore = () => {
      const target = opener.current;
      opener.current = null;
      if (target?.isConnected) target.focus();
    };
    dialog.addEventListener('close', restore);
    return () => dialog.removeEventListener('close', restore);
  }, []);
  const open = useCallback(() => {
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (ref.current?.open === false) ref.current.showModal();
  }, []);
  const close = useCallback(() => ref.current?.close(), []);
  return { ref, open, close };
}

/**
 * A yes/no question in a modal dialog: a heading, what happens, Cancel and a confirming button
 * (the submit, so Enter confirms; Escape and Cancel leave everything as it was).
 */
export function ConfirmDialog({
  modal,
  id,
  title,
  confirm,
  danger = false,
  busy = false,
  onConfirm,
  children,
}: {
  modal: Modal;
  /** Unique on the page: the ids of the heading and the text derive from it. */
  id: string;
  title: string;
  /** The confirming button's label, e.g. `Fire`, `Stop run`. */
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  children: ComponentChildren;
}) {
  return (
    <dialog ref={modal.ref} aria-labelledby={`${id}-title`} aria-describedby={`${id}-text`}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          onConfirm();
        }}
      >
        <h2 id={`${id}-title`}>{title}</h2>
        <div id={`${id}-text`}>{children}</div>
        <div class="actions">
          <button type="button" onClick={modal.close}>
            Cancel
          </button>
          <button type="submit" class={danger ? 'danger' : 'primary'} disabled={busy}>
            {confirm}
          </button>
        </div>
      </form>
    </dialog>
  );
}
