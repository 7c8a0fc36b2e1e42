import { autocompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, lintGutter, lintKeymap, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { useEffect, useRef } from 'preact/hooks';
import { schedulerCompletion } from './completion.js';
import type { Placed } from './validate.js';

export interface YamlEditorProps {
  /** The text the editor starts with; a new `docKey` starts it again with a new text. */
  readonly initial: string;
  readonly docKey: string;
  readonly problems: readonly Placed[];
  readonly recipes: () => readonly string[];
  readonly onChange: (text: string) => void;
  readonly labelledBy: string;
  readonly describedBy: string;
}

const theme = EditorView.theme({
  '&': { border: '1px solid var(--line)', borderRadius: '4px', background: 'var(--field)' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '1px' },
  '.cm-content': { fontFamily: 'var(--mono)', minHeight: '14em' },
  '.cm-gutters': { background: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { background: 'var(--active-line)' },
  '.cm-activeLineGutter': { background: 'var(--active-line)' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { background: 'var(--selection)' },
  '.cm-tooltip': { background: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--line)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': {
    background: 'var(--primary)',
    color: 'var(--on-primary)',
  },
});

/** Colours from the page's CSS variables, so the editor follows the light or dark scheme. */
const highlight = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: 'var(--hl-key)' },
  { tag: [tags.string, tags.special(tags.string), tags.content], color: 'var(--hl-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--hl-atom)' },
  { tag: [tags.comment, tags.lineComment], color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [tags.keyword, tags.typeName, tags.labelName, tags.meta, tags.tagName], color: 'var(--hl-meta)' },
  { tag: [tags.punctuation, tags.separator, tags.operator], color: 'var(--muted)' },
  { tag: tags.invalid, color: 'var(--bad)' },
]);

/**
 * CodeMirror 6 with YAML mode for a scheduler document: completion of the schema's field names
 * and enum values, and the validation problems (computed by the page from the server's own
 * validator) shown in the gutter and under the text. Tab is left to move the focus.
 */
export function YamlEditor(props: YamlEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    if (host.current === null) return;
    const state = EditorState.create({
      doc: props.initial,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        yaml(),
        syntaxHighlighting(highlight),
        autocompletion({ override: [schedulerCompletion(() => latest.current.recipes())] }),
        lintGutter(),
        keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, ...lintKeymap]),
        EditorView.lineWrapping,
        theme,
        EditorView.contentAttributes.of({
          'aria-labelledby': props.labelledBy,
          'aria-describedby': props.describedBy,
          'aria-multiline': 'true',
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) latest.current.onChange(update.state.doc.toString());
        }),
      ],
    });
    const created = new EditorView({ state, parent: host.current });
    view.current = created;
    return () => {
      created.destroy();
      view.current = null;
    };
    // The editor is made once per document; its text is its own from then on.
  }, [props.docKey]);

  useEffect(() => {
    const current = view.current;
    if (current === null) return;
    const length = current.state.doc.length;
    const diagnostics: Diagnostic[] = props.problems.map((p) => ({
      from: Math.min(p.from, length),
      to: Math.min(p.to, length),
      severity: 'error',
      source: p.source === 'server' ? 'server' : 'schema',
      message: p.path === '' ? p.message : `${p.path}: ${p.message}`,
    }));
    current.dispatch(setDiagnostics(current.state, diagnostics));
  }, [props.problems]);

  return <div ref={host} class="yaml-editor" />;
}
