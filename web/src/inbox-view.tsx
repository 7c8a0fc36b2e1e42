import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { shortInstant } from './format.js';
import { asApiError, useLoad } from './hooks.js';
import { type Answered, QuestionAnswer, withAnswer } from './question-answer.js';
import { routeHash } from './route.js';
import { focusElement } from './view-focus.js';

/**
 * The signed-in user's inbox (failed runs, late one-shots, invalid documents, questions of agent
 * runs to answer), with mark-read.
 */
export function InboxView({ api, tenant }: { api: Api; tenant: string }) {
  const [all, setAll] = useState(false);
  const inbox = useLoad(() => api.inbox(tenant, all), `${tenant}/${all}`);
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [status, setStatus] = useState('');
  // Answers given here since the list was read: the item shows its answer (and is read) at once.
  const [answers, setAnswers] = useState<ReadonlyMap<number, Answered>>(new Map());
  const items = (inbox.data?.items ?? []).map((item) => withAnswer(item, answers.get(item.id)));
  const answered = (id: number, answer: Answered) => {
    setAnswers((before) => new Map(before).set(id, answer));
    setSelected((before) => new Set([...before].filter((s) => s !== id)));
  };
  // After a mark, once the list is read again, the focus goes to the next unread item's Mark read
  // (else the heading): the marked item's button is gone, and the focus must not drop to the page.
  const focusAfter = useRef<number | null | undefined>(undefined);
  useEffect(() => {
    if (focusAfter.current === undefined) return;
    const next = focusAfter.current === null ? null : document.getElementById(`mark-${focusAfter.current}`);
    focusAfter.current = undefined;
    focusElement(next ?? document.getElementById('inbox-title'));
  }, [inbox.data]);

  const mark = async (ids: readonly number[]) => {
    const unread = items.filter((i) => i.readAt === null && !ids.includes(i.id));
    const at = items.findIndex((i) => ids.includes(i.id));
    focusAfter.current = (unread.find((i) => items.indexOf(i) > at) ?? unread.at(-1))?.id ?? null;
    try {
      const result = await api.markRead(tenant, ids);
      setStatus(`Marked ${result.marked} item(s) read.`);
      setSelected(new Set());
      inbox.reload();
    } catch (error) {
      focusAfter.current = undefined;
      setStatus(`Marking failed: ${asApiError(error).message}`);
    }
  };

  return (
    <section aria-labelledby="inbox-title" class="inbox">
      <h1 id="inbox-title">Inbox ({tenant})</h1>
      <div class="filters">
        <label class="check">
          <input type="checkbox" checked={all} onChange={(event) => setAll(event.currentTarget.checked)} />
          Show read items too
        </label>
        <button type="button" disabled={selected.size === 0} onClick={() => mark([...selected])}>
          Mark selected read
        </button>
        <button type="button" onClick={inbox.reload}>
          Refresh
        </button>
      </div>
      <p role="status" class="status">
        {status}
      </p>
      {inbox.error !== undefined && (
        <p class="error" role="alert">
          {inbox.error.message} [{inbox.error.code}]
        </p>
      )}
      {inbox.data !== undefined && items.length === 0 && <p class="muted">Nothing here.</p>}
      <ul class="inbox-items">
        {items.map((item) => (
          <li key={item.id} class={item.readAt === null ? 'unread' : 'read'}>
            <label class="check">
              <input
                type="checkbox"
                checked={selected.has(item.id)}
                disabled={item.readAt !== null}
                onChange={(event) => {
                  const next = new Set(selected);
                  if (event.currentTarget.checked) next.add(item.id);
                  else next.delete(item.id);
                  setSelected(next);
                }}
              />
              <span class="sr-only">Select: {item.title}</span>
            </label>
            <div>
              <p class="item-title">
                <span class="badge neutral">{item.kind}</span> <strong>{item.title}</strong>{' '}
                <span class="muted">{shortInstant(item.createdAt)}</span>
              </p>
              {item.kind === 'question' ? (
                <QuestionAnswer api={api} tenant={tenant} item={item} onAnswered={answered} />
              ) : (
                <p>{item.body}</p>
              )}
              <p class="muted">
                {item.project !== null && item.scheduler !== null && (
                  <a href={routeHash({ view: 'edit', tenant, project: item.project, name: item.scheduler })}>
                    {item.project}/{item.scheduler}
                  </a>
                )}
                {item.project !== null && item.scheduler !== null && item.correlationId !== null && (
                  <>
                    {' · '}
                    <a
                      aria-label={`the run of ${item.title}`}
                      href={routeHash({
                        view: 'run',
                        tenant,
                        project: item.project,
                        name: item.scheduler,
                        id: item.correlationId,
                      })}
                    >
                      the run
                    </a>
                  </>
                )}
                {item.readAt !== null && <> · read {shortInstant(item.readAt)}</>}
              </p>
            </div>
            {item.readAt === null && (
              <button
                type="button"
                id={`mark-${item.id}`}
                aria-label={`Mark read: ${item.title}`}
                onClick={() => mark([item.id])}
              >
                Mark read
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
