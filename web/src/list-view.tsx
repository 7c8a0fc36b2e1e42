import { useMemo, useState } from 'preact/hooks';
import { SETTLE_MS } from './announce.js';
import type { Api, FiredOneShot, RefreshResult, SchedulerSummary, Scope } from './api.js';
import { Timeline } from './charts.js';
import { describeCron } from './cron-describe.js';
import { timelineOf } from './cron-preview.js';
import { finishedText, outcomeClass, pauseText, relative, shortInstant } from './format.js';
import { asApiError, useLoad, useSettled } from './hooks.js';
import { focusOrigin, restoreFocus } from './keep-focus.js';
import { routeHash } from './route.js';
import { takeFlash } from './store.js';
import { shownZone, zoneChoice } from './zone.js';

function matches(s: SchedulerSummary, text: string, tag: string): boolean {
  if (tag !== '' && !s.tags.includes(tag)) return false;
  if (text === '') return true;
  const needle = text.toLowerCase();
  return [s.name, s.description, s.cron ?? '', s.at ?? '', s.timezone, s.lockMode, ...s.tags].some((field) =>
    field.toLowerCase().includes(needle),
  );
}

function schedule(s: SchedulerSummary): { code: string; words: string } {
  if (s.cron !== null) return { code: s.cron, words: describeCron(s.cron) };
  return { code: `at ${s.at ?? ''}`, words: 'once' };
}

/** Every scheduler of the project (spec §10 listing), with filters, refresh and the 24-hour timeline. */
export function ListView({ api, scope }: { api: Api; scope: Scope }) {
  const key = `${scope.tenant}/${scope.project}`;
  const list = useLoad(() => api.listSchedulers(scope), key);
  const [text, setText] = useState('');
  const [tag, setTag] = useState('');
  const [status, setStatus] = useState(() => takeFlash());
  const [refreshing, setRefreshing] = useState(false);
  const now = useMemo(() => Date.now(), [list.data]);
  const zone = useMemo(() => shownZone(), [zoneChoice()]);
  const schedulers = list.data?.schedulers ?? [];
  const tags = useMemo(() => [...new Set(schedulers.flatMap((s) => s.tags))].sort(), [schedulers]);
  const shown = schedulers.filter((s) => matches(s, text, tag));
  const rows = useMemo(() => timelineOf(schedulers, now), [schedulers, now]);
  const count = list.data === undefined ? '' : `${shown.length} of ${schedulers.length}`;
  const settledCount = useSettled(count, SETTLE_MS);

  const refresh = async () => {
    const origin = focusOrigin();
    setRefreshing(true);
    setStatus('Reloading the scheduler documents…');
    try {
      const result: RefreshResult = await api.refresh(scope);
      setStatus(
        `Reloaded: ${result.registered.length} registered${result.invalid.length > 0 ? `, ${result.invalid.length} invalid` : ''}.`,
      );
      list.reload();
    } catch (error) {
      setStatus(`Reload failed: ${asApiError(error).message}`);
    } finally {
      setRefreshing(false);
      restoreFocus(origin);
    }
  };

  return (
    <section aria-labelledby="list-title" class="list-view">
      <div class="title-row">
        <h1 id="list-title">
          Schedulers of {scope.tenant}/{scope.project}
        </h1>
        <div class="actions">
          <a class="button primary" href={routeHash({ view: 'new', ...scope })}>
            New scheduler
          </a>
          <button type="button" onClick={refresh} disabled={refreshing}>
            Reload
          </button>
          <a class="button" href={routeHash({ view: 'trash', ...scope })}>
            Trash
          </a>
        </div>
      </div>
      <p role="status" class="status">
        {status}
      </p>
      <search class="filters">
        <label>
          Filter
          <input
            type="search"
            name="filter"
            placeholder="name, description, cron…"
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </label>
        <label>
          Tag
          <select name="tag" value={tag} onChange={(event) => setTag(event.currentTarget.value)}>
            <option value="">any tag</option>
            {tags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <span class="count">{count}</span>
        <span class="sr-only" role="status">
          {settledCount === '' ? '' : `${settledCount} schedulers shown`}
        </span>
      </search>
      {list.error !== undefined && (
        <p class="error" role="alert">
          {list.error.message} [{list.error.code}]
        </p>
      )}
      {list.loading && list.data === undefined && <p>Loading…</p>}
      {list.data !== undefined && (
        <>
          <section class="table-wrap" aria-label="Schedulers table">
            <table class="schedulers">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Schedule</th>
                  <th scope="col">Time zone</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Lock mode</th>
                  <th scope="col">Last run</th>
                  <th scope="col">Next run</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((s) => {
                  const sched = schedule(s);
                  return (
                    <tr key={s.name} data-scheduler={s.name}>
                      <th scope="row">
                        <a href={routeHash({ view: 'edit', ...scope, name: s.name })}>{s.name}</a>
                        {s.source === 'tenant' && <span class="badge neutral"> tenant</span>}
                      </th>
                      <td>
                        {s.description}
                        {s.tags.length > 0 && (
                          <span class="tags">
                            {s.tags.map((t) => (
                              <span key={t} class="tag">
                                {t}
                              </span>
                            ))}
                          </span>
                        )}
                      </td>
                      <td>
                        <code>{sched.code}</code>
                        <br />
                        <span class="muted">{sched.words}</span>
                      </td>
                      <td>{s.timezone}</td>
                      <td>
                        {s.bounds?.finished ? (
                          <span title={finishedText(s.bounds)}>finished</span>
                        ) : s.enabled ? (
                          'yes'
                        ) : s.paused === null ? (
                          'no'
                        ) : (
                          <span title={pauseText(s.paused)}>paused</span>
                        )}
                      </td>
                      <td>
                        <span class={`lock lock-${s.lockMode}`}>{s.lockMode}</span>
                      </td>
                      <td>
                        {s.lastRun === null ? (
                          '—'
                        ) : (
                          <a
                            href={routeHash({
                              view: 'run',
                              ...scope,
                              name: s.name,
                              id: s.lastRun.correlationId,
                            })}
                          >
                            <span class={`badge ${outcomeClass(s.lastRun.outcome)}`}>
                              {s.lastRun.outcome}
                            </span>{' '}
                            <time dateTime={s.lastRun.at} title={s.lastRun.at}>
                              {relative(s.lastRun.at, now)}
                            </time>
                          </a>
                        )}
                      </td>
                      <td>
                        {s.nextRunAt === null ? (
                          '—'
                        ) : (
                          <time dateTime={s.nextRunAt} title={shortInstant(s.nextRunAt)}>
                            {shortInstant(s.nextRunAt)}
                            <br />
                            <span class="muted">{relative(s.nextRunAt, now)}</span>
                          </time>
                        )}
                      </td>
                    </tr>
                  );
                })}
                {shown.length === 0 && (
                  <tr>
                    <td colSpan={8}>
                      {schedulers.length === 0
                        ? 'This project has no schedulers yet.'
                        : 'Nothing matches the filter.'}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </section>
          {list.data.invalid.length > 0 && (
            <section class="invalid" aria-labelledby="invalid-title">
              <h2 id="invalid-title">Documents that do not load</h2>
              <ul>
                {list.data.invalid.map((i) => (
                  <li key={i.path}>
                    <code>{i.path}</code>: {i.message}
                  </li>
                ))}
              </ul>
            </section>
          )}
          <FiredOneShots fired={list.data.fired ?? []} scope={scope} />
          <Timeline rows={rows} now={now} zone={zone} />
        </>
      )}
    </section>
  );
}

/**
 * The one-shots that fired: they left the list, and their documents went to the trash. Each with
 * its run and a way to the trash; nothing when there are none.
 */
function FiredOneShots({ fired, scope }: { fired: readonly FiredOneShot[]; scope: Scope }) {
  if (fired.length === 0) return null;
  return (
    <section class="fired" aria-labelledby="fired-title">
      <h2 id="fired-title">One-shots that fired</h2>
      <p class="muted">
        They left the list; their documents are in the{' '}
        <a href={routeHash({ view: 'trash', ...scope })}>trash</a>. To run one again, write it anew with a
        later <code>at:</code>.
      </p>
      <ul>
        {fired.map((f) => (
          <li key={`${f.name}-${f.correlationId}`}>
            <strong>{f.name}</strong>, due {shortInstant(f.at)}, fired {shortInstant(f.firedAt)} (
            <a href={routeHash({ view: 'run', ...scope, name: f.name, id: f.correlationId })}>its run</a>)
            {f.trashPath === null && <span class="muted"> — no longer in the trash</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}
