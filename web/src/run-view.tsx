import { useState } from 'preact/hooks';
import { type Api, ApiError, type RunDetail, type Scope } from './api.js';
import { Crumbs } from './crumbs.js';
import { durationText, shortInstant } from './format.js';
import { LIVE_MS, useInterval, useLoad } from './hooks.js';
import { useFocusKept } from './keep-focus.js';
import { RunLog } from './markdown.js';
import { routeHash } from './route.js';
import { RunLinks, RunStateBadge } from './run-state.js';
import { StopButton } from './stop-button.js';
import { takeFlash } from './store.js';

function finished(run: RunDetail | undefined): boolean {
  return run !== undefined && (run.state === 'ended' || run.state === 'skipped');
}

/** One run (spec §9a): its fields, links to its process and session, and its run log rendered. */
export function RunView({
  api,
  scope,
  scheduler,
  correlationId,
}: {
  api: Api;
  scope: Scope;
  scheduler: string;
  correlationId: string;
}) {
  const [flash] = useState(() => takeFlash());
  const run = useLoad(
    () => api.run(scope, correlationId),
    `${scope.tenant}/${scope.project}/${correlationId}`,
  );
  // The page follows a run until it ends, while it is open (spec §10: the list stays a snapshot);
  // a run not found yet is asked for a minute, then its 404 stands.
  const waiting = !finished(run.data) && (run.error === undefined || run.error.status === 404);
  const [misses, setMisses] = useState(0);
  // Asked from this page: what the stop said stays once the run has ended.
  const [stopAsked, setStopAsked] = useState(false);
  useInterval(
    () => {
      if (run.data === undefined) setMisses((n) => n + 1);
      run.reload();
    },
    LIVE_MS,
    waiting && misses < 30,
  );
  // Stop leaves with the run's end, the focus with it when it had it.
  useFocusKept();
  const r = run.data;
  const running = r !== undefined && !finished(r) && r.processId !== null;
  const ended = finished(r) ? `Run ${correlationId} ended: ${r?.outcome}` : '';
  return (
    <section class="run-view" aria-labelledby="run-title">
      <Crumbs scope={scope} scheduler={scheduler} here={correlationId} />
      <h1 id="run-title">
        Run <code>{correlationId}</code>
      </h1>
      {flash !== '' && (
        <p role="status" class="status">
          {flash}
        </p>
      )}
      <p role="status" class="sr-only" id="run-end">
        {ended}
      </p>
      {run.error !== undefined && !(run.error instanceof ApiError && run.error.status === 404 && waiting) && (
        <p class="error" role="alert">
          {run.error.message} [{run.error.code}]
        </p>
      )}
      {r === undefined && <p>Loading…</p>}
      {r !== undefined && (
        <>
          <dl class="facts">
            <dt>State</dt>
            <dd>
              <RunStateBadge run={r} />
              {r.reason !== null && <> — {r.reason}</>}
              {(running || stopAsked) && r.processId !== null && (
                <>
                  {' '}
                  <StopButton
                    api={api}
                    scope={scope}
                    processId={r.processId}
                    correlationId={r.correlationId}
                    ended={!running}
                    onStopped={() => {
                      setStopAsked(true);
                      run.reload();
                    }}
                  />
                </>
              )}
            </dd>
            <dt>Trigger</dt>
            <dd>{r.trigger}</dd>
            <dt>Scheduled for</dt>
            <dd>{shortInstant(r.scheduledFor)}</dd>
            <dt>Started</dt>
            <dd>
              {shortInstant(r.startedAt)}
              {r.startedAt !== null && (
                <span class="muted">
                  {' '}
                  ({durationText(Date.parse(r.startedAt) - Date.parse(r.scheduledFor))} late)
                </span>
              )}
            </dd>
            <dt>Duration</dt>
            <dd>
              {r.startedAt !== null && r.endedAt !== null
                ? durationText(Date.parse(r.endedAt) - Date.parse(r.startedAt))
                : '—'}
            </dd>
            <dt>Coalesced</dt>
            <dd>{r.coalesced ? `yes, until ${shortInstant(r.coalescedUntil)}` : 'no'}</dd>
            <dt>Runs as</dt>
            <dd>{r.runAs}</dd>
            <dt>Process</dt>
            <dd>
              {r.processId === null ? (
                '—'
              ) : (
                <a href={routeHash({ view: 'process', ...scope, name: scheduler, id: r.processId })}>
                  {r.processId}
                </a>
              )}
            </dd>
            <dt>Session</dt>
            <dd>
              {r.sessionId === null ? (
                '—'
              ) : (
                <a href={routeHash({ view: 'session', ...scope, name: scheduler, id: r.sessionId })}>
                  {r.sessionId}
                </a>
              )}
            </dd>
            <dt>Run log</dt>
            <dd>
              <code>{r.logPath}</code>
            </dd>
          </dl>
          <RunLinks run={r} scope={{ ...scope, name: scheduler }} />
          {r.output !== null && (
            <section class="live-output" aria-labelledby="output-title">
              <h2 id="output-title">Output so far</h2>
              {r.output.output ? <pre>{r.output.output}</pre> : <p class="muted">No output yet.</p>}
              {r.output.errorOutput && (
                <>
                  <h3>Error output so far</h3>
                  <pre>{r.output.errorOutput}</pre>
                </>
              )}
            </section>
          )}
          <section class="log" aria-labelledby="log-title">
            <h2 id="log-title">Run log</h2>
            {r.log === null ? <p class="muted">The run log has expired.</p> : <RunLog text={r.log} />}
          </section>
        </>
      )}
    </section>
  );
}
