import { useEffect, useRef, useState } from 'preact/hooks';
import type { HistoryEntryView } from '../../src/contract/index.js';
import type { Api, Scope } from './api.js';
import { ConfirmDialog, useModal } from './confirm-dialog.js';
import { shortInstant } from './format.js';
import { useLoad } from './hooks.js';
import { lineDiff } from './line-diff.js';
import { useAction } from './use-action.js';
import { focusElement } from './view-focus.js';

/** Entries that wrote a body the archive or the live document keeps. */
const WROTE = new Set(['create', 'update', 'restore']);

function who(entry: HistoryEntryView): string {
  return `${entry.user}${entry.agent ? ' (agent)' : ''}`;
}

/** A chosen version's lines against the current ones: removed lines in <del>, added in <ins>. */
function Diff({ before, after }: { before: string; after: string }) {
  const lines = lineDiff(before, after);
  const changed = lines.filter((l) => l.op !== 'same').length;
  return (
    <>
      <p class="muted">
        {changed === 0
          ? 'The two versions are the same.'
          : `${lines.filter((l) => l.op === 'del').length} line(s) only in the chosen version (−), ${lines.filter((l) => l.op === 'add').length} only in the current one (+).`}
      </p>
      <pre class="code diff">
        {lines.map((l, i) =>
          l.op === 'del' ? (
            <del key={i}>{`− ${l.text}\n`}</del>
          ) : l.op === 'add' ? (
            <ins key={i}>{`+ ${l.text}\n`}</ins>
          ) : (
            <span key={i}>{`  ${l.text}\n`}</span>
          ),
        )}
      </pre>
    </>
  );
}

/**
 * A scheduler's version history (issue #23): who wrote, deleted or restored each version, when,
 * and through which interface; a chosen version's line diff against the current one; and Restore,
 * which writes it back as the newest version (only while the document is still at the version
 * shown, so nobody's newer save is overwritten unseen).
 */
export function HistoryPanel({
  api,
  scope,
  name,
  path,
  current,
  dirty,
  onRestored,
}: {
  api: Api;
  scope: Scope;
  name: string;
  path: string;
  current: { readonly version: number; readonly yaml: string };
  /** Unsaved edits in the editor: a restore would replace them, so it waits. */
  dirty: boolean;
  onRestored: (said: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const history = useLoad(
    () => (open ? api.history(scope, path) : Promise.resolve(undefined)),
    `${scope.tenant}/${scope.project}/${path}@${current.version}/${open}`,
  );
  const [chosen, setChosen] = useState<{ version: number; yaml: string } | undefined>(undefined);
  // A restore removes its button with the diff, older entries their button when none are left.
  const action = useAction('#versions-title');
  const modal = useModal();
  // A diff asked for: the focus goes to its heading, the Restore button next.
  const reveal = useRef(false);
  useEffect(() => {
    if (chosen === undefined || !reveal.current) return;
    reveal.current = false;
    focusElement(document.getElementById('diff-title'));
  }, [chosen]);

  const compare = (version: number) =>
    action.run(`Reading version ${version}`, async () => {
      const found = await api.schedulerVersion(scope, name, version);
      reveal.current = true;
      setChosen({ version, yaml: found.yaml });
      return '';
    });

  const restore = (version: number) =>
    action.run(
      'Restoring',
      async () => {
        const result = await api.restoreVersion(scope, name, version, current.version);
        setChosen(undefined);
        onRestored(`Restored version ${version} of ${name} as version ${result.version}.`);
        return undefined;
      },
      modal.close,
    );

  // Older pages asked for after the first: their entries, and the cursor of the next one.
  const [older, setOlder] = useState<{ entries: HistoryEntryView[]; cursor: number | null } | undefined>();
  useEffect(() => setOlder(undefined), [history.data]);
  const cursor = older === undefined ? (history.data?.nextCursor ?? null) : older.cursor;
  const loadOlder = (before: number) =>
    action.run('Reading older entries', async () => {
      const page = await api.history(scope, path, before);
      setOlder({ entries: [...(older?.entries ?? []), ...page.history], cursor: page.nextCursor });
      return '';
    });
  const entries = [...(history.data?.history ?? []), ...(older?.entries ?? [])];
  return (
    <section class="versions" aria-labelledby="versions-title">
      <div class="title-row">
        <h2 id="versions-title">Version history</h2>
        <button
          type="button"
          aria-expanded={open}
          aria-controls="versions-body"
          onClick={() => {
            setOpen(!open);
            setChosen(undefined);
          }}
        >
          {open ? 'Hide history' : 'Show history'}
        </button>
      </div>
      <div id="versions-body" hidden={!open}>
        {history.error !== undefined && (
          <p class="error" role="alert">
            {history.error.message} [{history.error.code}]
          </p>
        )}
        {open && history.data !== undefined && (
          <div class="table-wrap">
            <table class="history-table">
              <caption class="sr-only">Who wrote, deleted or restored each version, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">What</th>
                  <th scope="col">Who</th>
                  <th scope="col">Through</th>
                  <th scope="col">When</th>
                  <th scope="col">
                    <span class="sr-only">Compare</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.id} data-version={e.version}>
                    <td>{e.version}</td>
                    <td>{e.action}</td>
                    <td>{who(e)}</td>
                    <td>{e.interface}</td>
                    <td>{shortInstant(e.at)}</td>
                    <td>
                      {e.version === current.version && WROTE.has(e.action) ? (
                        <span class="muted">current</span>
                      ) : (
                        WROTE.has(e.action) && (
                          <button
                            type="button"
                            disabled={action.busy}
                            onClick={() => void compare(e.version)}
                          >
                            Compare version {e.version}
                          </button>
                        )
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {cursor !== null && (
              <button type="button" disabled={action.busy} onClick={() => void loadOlder(cursor)}>
                Older entries
              </button>
            )}
          </div>
        )}
        <p role="status" class={action.said.error ? 'status error' : 'status'}>
          {action.said.text}
        </p>
        {chosen !== undefined && (
          <section class="diff-view" aria-labelledby="diff-title">
            <h3 id="diff-title">
              Version {chosen.version} against the current version {current.version}
            </h3>
            <Diff before={chosen.yaml} after={current.yaml} />
            <button
              type="button"
              onClick={modal.open}
              disabled={action.busy || dirty}
              title={dirty ? 'Save or reload your changes first' : undefined}
            >
              Restore version {chosen.version}…
            </button>
          </section>
        )}
      </div>
      <ConfirmDialog
        modal={modal}
        id="restore-version"
        title={`Restore version ${chosen?.version ?? ''} of ${name}?`}
        confirm="Restore"
        busy={action.busy}
        onConfirm={() => chosen !== undefined && void restore(chosen.version)}
      >
        <p>
          Its text becomes the newest version ({current.version + 1}), checked and recorded like a save; the
          current version {current.version} stays in the history.
        </p>
      </ConfirmDialog>
    </section>
  );
}
