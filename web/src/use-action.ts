import { useState } from 'preact/hooks';
import { asApiError } from './hooks.js';
import { focusOrigin, restoreFocus } from './keep-focus.js';

/** What an action said: a line for its status, an error or not. */
export interface Said {
  readonly text: string;
  readonly error: boolean;
}

/** An action of a view: whether one runs, what the last one said, and how to run one. */
export interface Action {
  readonly busy: boolean;
  readonly said: Said;
  /**
   * Runs `work` (busy meanwhile): its answer (a line, or undefined to say nothing new) becomes
   * `said`; a failure says `<what> failed: <message> [<code>]`. `after` runs either way (e.g.
   * closing the dialog that asked for it).
   */
  readonly run: (what: string, work: () => Promise<string | undefined>, after?: () => void) => Promise<void>;
}

/**
 * `fallback`: where the focus goes when the action took away the element it started from (a CSS
 * selector, by default the view's heading); while it runs its buttons are disabled, and the
 * focus comes back to the one it started from (a dialog's: the dialog's opener) — see keep-focus.ts.
 */
export function useAction(fallback?: string): Action {
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<Said>({ text: '', error: false });
  const run = async (what: string, work: () => Promise<string | undefined>, after?: () => void) => {
    const origin = focusOrigin();
    setBusy(true);
    try {
      const text = await work();
      if (text !== undefined) setSaid({ text, error: false });
    } catch (error) {
      const failure = asApiError(error);
      setSaid({ text: `${what} failed: ${failure.message} [${failure.code}]`, error: true });
    } finally {
      setBusy(false);
      after?.();
      restoreFocus(origin, fallback);
    }
  };
  return { busy, said, run };
}
