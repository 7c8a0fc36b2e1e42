import { useRef, useState } from 'preact/hooks';
import { answeredText } from './announce.js';
import type { Api, InboxItemView } from './api.js';
import { shortInstant } from './format.js';
import { useAction } from './use-action.js';

/** What an answer recorded: the answer, who gave it and when (ISO-8601 UTC). */
export interface Answered {
  readonly answer: string;
  readonly answeredBy: string;
  readonly answeredAt: string;
}

/**
 * `item` with an answer given on this page since the inbox was read (`given`, if any): answered
 * and read, as the server has it now. An item the server already shows answered stays as it is.
 */
export function withAnswer(item: InboxItemView, given: Answered | undefined): InboxItemView {
  if (given === undefined || item.kind !== 'question' || item.answeredAt != null) return item;
  return { ...item, ...given, readAt: item.readAt ?? given.answeredAt };
}

/**
 * A question item's own part of the inbox (issue #25): the full text an agent run asked (literal
 * text, its lines kept), then its answer with who gave it and when, or, while it is unanswered, a
 * field and Answer. The answer is sent as the token's user; a refusal (answered already, the run
 * has ended, an empty answer) is said in the item's status line with the API's message, and
 * nothing changes. Once answered, the field and the button are gone and the focus goes to the
 * answer.
 */
export function QuestionAnswer({
  api,
  tenant,
  item,
  onAnswered,
}: {
  api: Api;
  tenant: string;
  item: InboxItemView;
  onAnswered: (id: number, answered: Answered) => void;
}) {
  const [text, setText] = useState('');
  const answeredId = `answered-${item.id}`;
  const action = useAction(`#${answeredId}`);
  const fieldId = `answer-text-${item.id}`;
  const statusId = `answer-status-${item.id}`;
  // The status line is there from the start wherever there is a form (a live region added with
  // its text may go unheard); a question answered before the page was read needs none.
  const hasStatus = useRef(item.answeredAt == null).current;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run('Answering', async () => {
      const result = await api.answer(tenant, item.id, text);
      onAnswered(item.id, { answer: text, answeredBy: result.answeredBy, answeredAt: result.answeredAt });
      return answeredText(result.answeredBy);
    });
  };
  return (
    <div class="question">
      <p class="question-text">{item.body}</p>
      {item.answeredAt != null ? (
        <div class="answered" id={answeredId}>
          <p class="muted">
            Answered by {item.answeredBy} at {shortInstant(item.answeredAt)}:
          </p>
          <p class="answer-text">{item.answer}</p>
        </div>
      ) : (
        <form class="answer-form" onSubmit={submit}>
          <label for={fieldId}>
            Answer<span class="sr-only"> to {item.title}</span>
          </label>
          <textarea
            id={fieldId}
            name="answer"
            rows={3}
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
            aria-describedby={action.said.error ? statusId : undefined}
          />
          <button type="submit" class="primary" disabled={action.busy} aria-label={`Answer: ${item.title}`}>
            Answer
          </button>
        </form>
      )}
      {hasStatus && (
        <p role="status" id={statusId} class={action.said.error ? 'status error' : 'status'}>
          {action.said.text}
        </p>
      )}
    </div>
  );
}
