import { useState } from 'preact/hooks';
import type { Api, Scope } from './api.js';
import { ConfirmDialog, useModal } from './confirm-dialog.js';
import { asApiError } from './hooks.js';

/** The reason a stop from the editor leaves in the run log and its END line. */
const REASON = 'stopped from the web editor';

/**
 * Stop for a running run's process, asked first in a dialog: the process is stopped on whichever
 * worker runs it, and its run ends cancelled. Says what happened in its own status line.
 */
export function StopButton({
  api,
  scope,
  processId,
  correlationId,
  onStopped,
}: {
  api: Api;
  scope: Scope;
  processId: string;
  correlationId: string;
  onStopped: () => void;
}) {
  const modal = useModal();
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ text: string; error: boolean }>({ text: '', error: false });
  const stop = async () => {
    setBusy(true);
    try {
      const result = await api.stopProcess(scope, processId, REASON);
      modal.close();
      setSaid({
        text: result.stopping
          ? `Stopping ${correlationId}: it ends cancelled.`
          : `${correlationId} had already ended or was being stopped.`,
        error: false,
      });
      onStopped();
    } catch (error) {
      const failure = asApiError(error);
      modal.close();
      setSaid({ text: `Stopping failed: ${failure.message} [${failure.code}]`, error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="stop">
      <button type="button" class="danger" onClick={modal.open} disabled={busy}>
        Stop…
      </button>{' '}
      <span role="status" class={said.error ? 'error' : undefined}>
        {said.text}
      </span>
      <ConfirmDialog
        modal={modal}
        id={`stop-${processId}`}
        title="Stop this run?"
        confirm="Stop run"
        danger
        busy={busy}
        onConfirm={() => void stop()}
      >
        <p>
          Ursa stops its process <code>{processId}</code> on whichever worker runs it; run{' '}
          <code>{correlationId}</code> ends cancelled, and its run log says it was {REASON}.
        </p>
      </ConfirmDialog>
    </span>
  );
}
