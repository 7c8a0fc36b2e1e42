import { useState } from 'preact/hooks';
import { asApiError } from './hooks.js';

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

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<Said>({ text: '', error: false });
  const run = async (what: string, work: () => Promise<string | undefined>, after?: () => void) => {
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
    }
  };
  return { busy, said, run };
}
