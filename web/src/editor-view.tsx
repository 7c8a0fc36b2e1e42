import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ActiveRun } from './active-run.js';
import { problemsText, SETTLE_MS } from './announce.js';
import type { Api, RunSummary, Scope } from './api.js';
import { BackfillDialog } from './backfill-dialog.js';
import { RunChart } from './charts.js';
import { ConfirmDialog, useModal } from './confirm-dialog.js';
import { type Preview, previewOf, viewerZone } from './cron-preview.js';
import { FireDialog } from './fire-dialog.js';
import { firedRun, fireSentence } from './fire-outcome.js';
import { durationText, pauseText, shortInstant } from './format.js';
import { HistoryPanel } from './history-view.js';
import { asApiError, useLoad, useSettled } from './hooks.js';
import { focusOrigin, restoreFocus, useFocusKept } from './keep-focus.js';
import { navigate } from './navigate.js';
import { routeHash } from './route.js';
import { RunLinksCell, RunStateBadge, runStateText } from './run-state.js';
import { setFlash, takeFlash } from './store.js';
import { setUnsaved } from './unsaved-guard.js';
import { nameProblem, type Placed, place, validateText } from './validate.js';
import { YamlEditor } from './yaml-editor.js';
import { shownZone, zoneChoice } from './zone.js';

const EXAMPLE = (zone: string) =>
  `description: What this scheduler is for.\ncron: "0 0 8 * * MON-FRI"\ntimezone: ${zone}\nrecipe: noop\n`;

function CronHelper({ preview }: { preview: Preview | undefined }) {
  return (
    <section class="cron-helper" aria-labelledby="cron-title">
      <h2 id="cron-title">Next fire times</h2>
      {preview === undefined ? (
        <p class="muted">Fix the problems above to see when this scheduler fires.</p>
      ) : (
        <>
          <p class="describe">
            <strong>{preview.description}</strong> — read in <code>{preview.zone}</code>
          </p>
          {preview.limits.map((limit) => (
            <p class="muted" key={limit}>
              {limit}
            </p>
          ))}
          <div class="table-wrap">
            <table class="next-runs">
              <caption class="sr-only">The next fire times, in the scheduler's zone and in yours</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">In {preview.zone}</th>
                  <th scope="col">
                    In{' '}
                    {preview.viewerZone === viewerZone().id
                      ? `your zone (${preview.viewerZone})`
                      : preview.viewerZone}
                  </th>
                  <th scope="col">DST</th>
                </tr>
              </thead>
              <tbody>
                {preview.times.map((t, i) => (
                  <tr key={t.instant}>
                    <td>{i + 1}</td>
                    <td>
                      <time dateTime={new Date(t.instant).toISOString()}>{t.inZone}</time>
                    </td>
                    <td>{t.inViewer}</td>
                    <td>{t.dst === undefined ? '' : <span class="dst-badge">◆ {t.dst}</span>}</td>
                  </tr>
                ))}
                {preview.times.length === 0 && (
                  <tr>
                    <td colSpan={4}>It does not fire again.</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          {preview.kind === 'cron' && (
            <section class="dst-notes" aria-labelledby="dst-title">
              <h3 id="dst-title">Daylight saving in the next 12 months</h3>
              {preview.notes.length === 0 ? (
                <p class="muted">No fire time of the next 12 months falls in a DST gap or overlap.</p>
              ) : (
                <ul>
                  {preview.notes.map((n) => (
                    <li key={n}>{n}</li>
                  ))}
                </ul>
              )}
            </section>
          )}
        </>
      )}
    </section>
  );
}

function RunHistory({
  runs,
  scope,
  name,
  onRefresh,
  error,
}: {
  runs: readonly RunSummary[] | undefined;
  scope: Scope;
  name: string;
  onRefresh: () => void;
  error: string | undefined;
}) {
  return (
    <section class="history" aria-labelledby="history-title">
      <div class="title-row">
        <h2 id="history-title">Run history</h2>
        <button type="button" onClick={onRefresh}>
          Refresh
        </button>
      </div>
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {runs !== undefined && runs.length === 0 && <p class="muted">No runs yet.</p>}
      {runs !== undefined && runs.length > 0 && (
        <>
          <RunChart runs={runs} />
          <div class="table-wrap">
            <table class="runs">
              <caption class="sr-only">The last {runs.length} runs by occurrence, the latest first</caption>
              <thead>
                <tr>
                  <th scope="col">State</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Scheduled for</th>
                  <th scope="col">Started late by</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Coalesced</th>
                  <th scope="col">Linked runs</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((r) => (
                  <tr key={r.correlationId} data-run={r.correlationId}>
                    <td>
                      <a
                        href={routeHash({ view: 'run', ...scope, name, id: r.correlationId })}
                        aria-label={`Run ${r.correlationId}: ${runStateText(r)}`}
                      >
                        <RunStateBadge run={r} />
                      </a>
                    </td>
                    <td>{r.trigger}</td>
                    <td>{shortInstant(r.scheduledFor)}</td>
                    <td>
                      {r.startedAt === null ? (
                        'not started'
                      ) : (
                        <time dateTime={r.startedAt} title={`started ${shortInstant(r.startedAt)}`}>
                          {durationText(Date.parse(r.startedAt) - Date.parse(r.scheduledFor))}
                        </time>
                      )}
                    </td>
                    <td>{durationText(r.durationMs)}</td>
                    <td>{r.coalesced ? `yes, until ${shortInstant(r.coalescedUntil)}` : 'no'}</td>
                    <td class="links">
                      <RunLinksCell run={r} scope={{ ...scope, name }} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/**
 * One scheduler (or a new one): its YAML in CodeMirror, validated as it is typed with the server's
 * own validator, the cron helper, save / delete / reload / fire, and its run history.
 */
export function EditorView({ api, scope, name }: { api: Api; scope: Scope; name: string | undefined }) {
  const isNew = name === undefined;
  const key = `${scope.tenant}/${scope.project}/${name ?? ''}`;
  const detail = useLoad(
    () => (name === undefined ? Promise.resolve(undefined) : api.getScheduler(scope, name)),
    key,
  );
  const runs = useLoad(
    () => (name === undefined ? Promise.resolve(undefined) : api.runs(scope, name, 20)),
    key,
  );
  const recipes = useLoad(() => api.documents(scope, '_vance/recipes/'), `${scope.tenant}/${scope.project}`);
  const recipeNames = useRef<readonly string[]>(['noop']);
  recipeNames.current = [
    'noop',
    ...(recipes.data?.documents ?? [])
      .map((d) => /^_vance\/recipes\/([^/]+)\.yaml$/.exec(d.path)?.[1])
      .filter((n): n is string => n !== undefined && n !== 'noop'),
  ];

  const [text, setText] = useState('');
  const [docKey, setDocKey] = useState(isNew ? 'new' : '');
  const [initial, setInitial] = useState('');
  const [newName, setNewName] = useState('');
  const [serverProblems, setServerProblems] = useState<readonly Placed[]>([]);
  // `run`: the run an action started, linked beside the message.
  const [status, setStatus] = useState<{ text: string; error: boolean; run?: string }>(() => ({
    text: takeFlash(),
    error: false,
  }));
  const [busy, setBusy] = useState(false);
  // Each dialog gives the focus back to the button that opened it, however it closes.
  const deleteModal = useModal();
  const pauseModal = useModal();
  const backfillModal = useModal();
  const [pauseNote, setPauseNote] = useState('');
  const fireModal = useModal();
  // The active run's Stop leaves when the run ends, Insert example once the text is there.
  useFocusKept();
  const savedOverlap = useMemo(
    () =>
      detail.data === undefined
        ? undefined
        : validateText(detail.data.yaml, detail.data.name).definition?.overlap,
    [detail.data],
  );

  // A loaded document starts the editor (again) with its text.
  useEffect(() => {
    if (detail.data === undefined) return;
    setInitial(detail.data.yaml);
    setText(detail.data.yaml);
    setDocKey(`${detail.data.name}@${detail.data.version}`);
  }, [detail.data]);

  const effectiveName = name ?? newName;
  const validation = useMemo(() => validateText(text, effectiveName), [text, effectiveName]);
  const problems = useMemo(() => [...validation.problems, ...serverProblems], [validation, serverProblems]);
  const settledProblems = useSettled(problems.length, SETTLE_MS);
  const viewer = useMemo(() => viewerZone(), []);
  const shown = useMemo(() => shownZone(), [zoneChoice()]);
  const preview = useMemo(
    () =>
      validation.definition === undefined
        ? undefined
        : previewOf(
            validation.definition,
            { tenant: scope.tenant, project: scope.project, name: effectiveName },
            Date.now(),
            shown,
          ),
    [validation.definition, shown, scope.tenant, scope.project, effectiveName],
  );
  const nameError = isNew ? nameProblem(newName) : undefined;
  // Against the text the editor was started with: a reloaded document (say, after a pause) then
  // never counts as unsaved for the one render before the editor takes it, which disabled the
  // focused Pause/Resume button and dropped the keyboard's focus.
  const dirty = !isNew && detail.data !== undefined && text !== initial;
  const ready = isNew || detail.data !== undefined;
  const unsaved = isNew ? text.trim() !== '' : dirty;
  useEffect(() => {
    setUnsaved(
      unsaved ? `${name ?? 'The new scheduler'} has unsaved changes. Leave and lose them?` : undefined,
    );
    return () => setUnsaved(undefined);
  }, [unsaved, name]);

  const run = async (what: string, work: () => Promise<void>) => {
    const origin = focusOrigin();
    setBusy(true);
    try {
      await work();
    } catch (error) {
      const failure = asApiError(error);
      setStatus({ text: `${what} failed: ${failure.message} [${failure.code}]`, error: true });
      if (failure.issues.length > 0) setServerProblems(place(text, failure.issues, 'server'));
    } finally {
      setBusy(false);
      restoreFocus(origin);
    }
  };

  const save = () =>
    run('Saving', async () => {
      setServerProblems([]);
      const target = name ?? newName;
      const result = await api.putScheduler(scope, target, text);
      const extra = [
        result.filledTimezone === null ? '' : ` The time zone ${result.filledTimezone} was filled in.`,
        ...result.warnings.map((w) => ` ${w}`),
      ].join('');
      const said = `${result.created ? 'Created' : 'Saved'} ${result.path} (version ${result.version}).${extra}`;
      setStatus({ text: said, error: false });
      if (isNew) {
        setUnsaved(undefined);
        setFlash(said);
        navigate({ view: 'edit', ...scope, name: target });
      } else {
        detail.reload();
        runs.reload();
      }
    });

  const remove = () =>
    run('Deleting', async () => {
      if (name === undefined) return;
      const result = await api.deleteScheduler(scope, name);
      deleteModal.close();
      setUnsaved(undefined);
      setFlash(`Deleted ${name}: its document went to ${result.trashPath}.`);
      navigate({ view: 'list', ...scope });
    });

  const refresh = () =>
    run('Reloading', async () => {
      const result = await api.refresh(scope);
      const invalid = result.invalid.find((i) => name !== undefined && i.path.endsWith(`/${name}.yaml`));
      setStatus({
        text: `Reloaded the project's scheduler documents: ${result.registered.length} registered${invalid === undefined ? '' : `; this one does not load: ${invalid.message}`}.`,
        error: invalid !== undefined,
      });
      detail.reload();
      runs.reload();
    });

  const paused = detail.data?.paused != null;
  const pauseOrResume = (note: string) =>
    run(paused ? 'Resuming' : 'Pausing', async () => {
      if (name === undefined) return;
      const result = paused ? await api.resume(scope, name) : await api.pause(scope, name, note);
      pauseModal.close();
      setStatus({
        text:
          result.paused === null ? `Resumed ${name}: it fires from its next occurrence.` : `Paused ${name}.`,
        error: false,
      });
      detail.reload();
    });

  const backfill = (from: string, to: string) =>
    run('Backfilling', async () => {
      if (name === undefined) return;
      const result = await api.backfill(scope, name, from, to);
      backfillModal.close();
      const had = result.existing === 0 ? '' : `; ${result.existing} had a run already`;
      setStatus({
        text: `Backfill of ${name}: ${result.occurrences} occurrences from ${shortInstant(result.from)} to ${shortInstant(result.to)}, ${result.queued} queued${had}.`,
        error: false,
      });
      runs.reload();
    });

  const fire = () =>
    run('Firing', async () => {
      if (name === undefined) return;
      const fired = await api.fire(scope, name);
      fireModal.close();
      // What the lane did with it, in `ursa fire`'s words: started, waits, folded, did not start.
      // The fire happened even when the run cannot be read back: it is said without the story.
      const text = await firedRun(api, scope, fired.correlationId).then(
        (judged) => fireSentence(name, judged),
        () => `Fired ${name}: ${fired.correlationId}.`,
      );
      setStatus({ text, error: false, run: fired.correlationId });
      runs.reload();
    });

  return (
    <section class="editor-view" aria-labelledby="editor-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={routeHash({ view: 'list', ...scope })}>
          {scope.tenant}/{scope.project}
        </a>{' '}
        / <span aria-current="page">{name ?? 'new scheduler'}</span>
      </nav>
      <div class={isNew ? 'columns single' : 'columns'}>
        <div class="main-col">
          <h1 id="editor-title">{isNew ? 'New scheduler' : name}</h1>
          {detail.error !== undefined && (
            <p class="error" role="alert">
              {detail.error.message} [{detail.error.code}]
              {detail.error.code === 'ONE_SHOT_FIRED' && (
                <>
                  {' '}
                  <a href={routeHash({ view: 'trash', ...scope })}>Open the trash</a>
                </>
              )}
            </p>
          )}
          {detail.data !== undefined && (
            <p class="meta muted">
              <code>{detail.data.path}</code> · {detail.data.source} · version {detail.data.version} · by{' '}
              {detail.data.createdBy} · updated {shortInstant(detail.data.updatedAt)}
              {detail.data.nextRunAt !== null && <> · next run {shortInstant(detail.data.nextRunAt)}</>}
            </p>
          )}
          {validation.definition?.target.kind === 'recipe' && (
            <p class="recipe-link">
              Runs the recipe{' '}
              <a href={routeHash({ view: 'recipe', ...scope, name: validation.definition.target.recipe })}>
                {validation.definition.target.recipe}
              </a>{' '}
              <span class="muted">(its engine and command)</span>
            </p>
          )}
          {detail.data?.paused != null && (
            <p class="paused" role="note">
              {pauseText(detail.data.paused)}. It runs nothing until it is resumed.
            </p>
          )}
          {isNew && (
            <div class="field">
              <label for="scheduler-name">Name</label>
              <input
                id="scheduler-name"
                name="name"
                spellcheck={false}
                autocomplete="off"
                value={newName}
                aria-invalid={newName !== '' && nameError !== undefined}
                aria-describedby="name-hint"
                onInput={(event) => setNewName(event.currentTarget.value)}
              />
              <span id="name-hint" class={newName !== '' && nameError !== undefined ? 'error' : 'muted'}>
                {newName !== '' && nameError !== undefined
                  ? nameError
                  : 'The document is saved as _vance/scheduler/<name>.yaml.'}
              </span>
            </div>
          )}
          {ready && (
            <>
              <div class="title-row">
                <h2 id="yaml-label">Document (YAML)</h2>
                {isNew && text.trim() === '' && (
                  <button
                    type="button"
                    onClick={() => {
                      const example = EXAMPLE(viewer.id);
                      setInitial(example);
                      setText(example);
                      setDocKey(`new-${Date.now()}`);
                    }}
                  >
                    Insert example
                  </button>
                )}
              </div>
              <p id="yaml-hint" class="muted">
                Checked as you type against the server's schema. Ctrl-Space completes field names and values;
                Tab leaves the editor.
              </p>
              {docKey !== '' && (
                <YamlEditor
                  docKey={docKey}
                  initial={initial}
                  problems={problems}
                  recipes={() => recipeNames.current}
                  onChange={(value) => {
                    setText(value);
                    setServerProblems([]);
                  }}
                  labelledBy="yaml-label"
                  describedBy="yaml-hint problems"
                />
              )}
              <section id="problems" class="problems" aria-label="Problems">
                {problems.length === 0 ? (
                  <p class="ok-text">No problems: the document is valid.</p>
                ) : (
                  <ul>
                    {problems.map((p, i) => (
                      <li key={`${i}:${p.path}:${p.message}`} class="problem">
                        <span class="where">
                          line {p.line}
                          {p.path === '' ? '' : ` · ${p.path}`}
                        </span>
                        : <span class="message">{p.message}</span>
                        {p.source === 'server' && <span class="badge neutral"> server</span>}
                      </li>
                    ))}
                  </ul>
                )}
              </section>
              <fieldset class="actions">
                <legend class="sr-only">Scheduler actions</legend>
                <button
                  type="button"
                  class="primary"
                  onClick={save}
                  disabled={busy || validation.problems.length > 0 || nameError !== undefined}
                >
                  {isNew ? 'Create' : 'Save'}
                </button>
                {!isNew && (
                  <>
                    <button type="button" onClick={fireModal.open} disabled={busy || paused}>
                      Fire now…
                    </button>
                    <button
                      type="button"
                      onClick={() => (paused ? pauseOrResume('') : pauseModal.open())}
                      disabled={busy || dirty}
                      title={dirty ? 'Save or reload your changes first' : undefined}
                    >
                      {paused ? 'Resume' : 'Pause…'}
                    </button>
                    {preview?.kind === 'cron' && (
                      <button
                        type="button"
                        onClick={backfillModal.open}
                        disabled={busy || paused || dirty}
                        title={dirty ? 'Save or reload your changes first' : undefined}
                      >
                        Backfill…
                      </button>
                    )}
                    <button type="button" onClick={refresh} disabled={busy}>
                      Reload
                    </button>
                    <button type="button" class="danger" onClick={deleteModal.open} disabled={busy}>
                      Delete…
                    </button>
                  </>
                )}
                {dirty && <span class="muted">Unsaved changes (Fire runs the saved version).</span>}
              </fieldset>
              <p role="status" class={status.error ? 'status error' : 'status'}>
                {status.text}
                {status.run !== undefined && name !== undefined && (
                  <>
                    {' '}
                    <a href={routeHash({ view: 'run', ...scope, name, id: status.run })}>Open the run</a>
                  </>
                )}
              </p>
              <p role="status" class="sr-only" id="problems-announcement">
                {problemsText(settledProblems)}
              </p>
              <CronHelper preview={preview} />
              {name !== undefined && detail.data?.source === 'project' && (
                <HistoryPanel
                  api={api}
                  scope={scope}
                  name={name}
                  path={detail.data.path}
                  current={detail.data}
                  dirty={dirty}
                  onRestored={(said) => {
                    setStatus({ text: said, error: false });
                    detail.reload();
                  }}
                />
              )}
            </>
          )}
        </div>
        {!isNew && name !== undefined && (
          <aside class="side-col">
            <ActiveRun api={api} scope={scope} name={name} runs={runs.data?.runs} onStopped={runs.reload} />
            <RunHistory
              runs={runs.data?.runs}
              scope={scope}
              name={name}
              onRefresh={runs.reload}
              error={runs.error?.message}
            />
          </aside>
        )}
      </div>
      <dialog ref={pauseModal.ref} aria-labelledby="pause-title">
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            void pauseOrResume(pauseNote);
          }}
        >
          <h2 id="pause-title">Pause {name}?</h2>
          <p>It runs nothing until it is resumed; what falls due meanwhile is not run later.</p>
          <label for="pause-note">Why (shown beside the scheduler)</label>
          <input
            id="pause-note"
            type="text"
            maxLength={500}
            value={pauseNote}
            onInput={(event) => setPauseNote((event.target as HTMLInputElement).value)}
          />
          <div class="actions">
            <button type="button" onClick={pauseModal.close}>
              Cancel
            </button>
            <button type="submit" class="primary">
              Pause
            </button>
          </div>
        </form>
      </dialog>
      {name !== undefined && (
        <FireDialog
          modal={fireModal}
          name={name}
          overlap={savedOverlap}
          dirty={dirty}
          busy={busy}
          onConfirm={() => void fire()}
        />
      )}
      <BackfillDialog
        name={name}
        modal={backfillModal}
        zone={shown}
        onSubmit={(from, to) => void backfill(from, to)}
      />
      <ConfirmDialog
        modal={deleteModal}
        id="delete"
        title={`Delete ${name}?`}
        confirm="Delete"
        danger
        busy={busy}
        onConfirm={() => void remove()}
      >
        <p>Ursa stops it and moves its document to the project's trash.</p>
      </ConfirmDialog>
    </section>
  );
}
