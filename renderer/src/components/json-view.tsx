import { DiffEditor, Editor } from '@monaco-editor/react';
import type { editor } from 'monaco-editor';
import { setupMonaco } from '../monaco/setup-monaco';

// This module is loaded lazily (see lazy-editors.tsx): Monaco's 4 MB stay off the first render.
setupMonaco();

const OPTIONS: editor.IStandaloneEditorConstructionOptions = {
  readOnly: true,
  domReadOnly: true,
  minimap: { enabled: false },
  fontSize: 12,
  lineNumbers: 'off',
  folding: true,
  scrollBeyondLastLine: false,
  automaticLayout: true,
  wordWrap: 'on',
  renderLineHighlight: 'none',
  overviewRulerLanes: 0,
  // Read-only viewers: Tab moves on to the next control instead of being kept by the editor.
  tabFocusMode: true,
};

/**
 * The URI of an inspector model: its name (`result.json`, `diff-after`) and, as the query,
 * what it shows (episode/branch, step, file). Keyed by content, a model can never show
 * another step's or another episode's text when a view remounts.
 */
export function inspectorModelUri(name: string, scope: string): string {
  return `stepbox://inspector/${name}?${encodeURIComponent(scope)}`;
}

/** Read-only JSON in Monaco; `scope` (branch/step) keys its model with `model` (the view's name). */
export function JsonView(props: {
  readonly model: string;
  readonly scope: string;
  readonly value: string;
  readonly height?: number | string;
}) {
  return (
    <div className="monaco-box" style={{ height: props.height ?? 160 }} data-model={props.model}>
      <Editor
        path={inspectorModelUri(props.model, props.scope)}
        language="json"
        theme="stepbox"
        value={props.value}
        options={OPTIONS}
        loading={<div className="state state-loading">Loading editor…</div>}
        // A model already made for this URI keeps its old text on a remount (the editor applies
        // `value` only when it changes): a step first seen while running kept `null` as its result.
        onMount={(ed) => {
          const m = ed.getModel();
          if (m && m.getValue() !== props.value) m.setValue(props.value);
        }}
      />
    </div>
  );
}

const LANGUAGES: Record<string, string> = {
  py: 'python',
  js: 'javascript',
  ts: 'typescript',
  json: 'json',
  md: 'markdown',
  sh: 'shell',
  yml: 'yaml',
  yaml: 'yaml',
  html: 'html',
  css: 'css',
};

/** The Monaco language of a file, by its extension (plain text when unknown). */
function languageOf(path: string): string {
  return LANGUAGES[path.split('.').pop() ?? ''] ?? 'plaintext';
}

/**
 * A file the step added (or emptied, or removed): its whole text in one editor, every line
 * marked added (green, +) or removed (red, −). A diff against nothing would draw the empty
 * side's one blank line as a deleted line, a red "−" before a new file's content.
 */
export function FileWholeView(props: {
  readonly path: string;
  readonly scope: string;
  readonly text: string;
  readonly side: 'added' | 'removed';
}) {
  // The model keeps the diff's names: the text after the step (added) or before it (removed).
  const name = props.side === 'added' ? 'diff-after' : 'diff-before';
  const mark = (ed: editor.IStandaloneCodeEditor) => {
    const m = ed.getModel();
    if (!m) return;
    if (m.getValue() !== props.text) m.setValue(props.text);
    // Every line is the file's: its closing newline is dropped before it gets here (fileViewOf).
    const last = m.getLineCount();
    ed.createDecorationsCollection([
      {
        range: { startLineNumber: 1, startColumn: 1, endLineNumber: last, endColumn: 1 },
        options: {
          isWholeLine: true,
          className: `file-line-${props.side}`,
          linesDecorationsClassName: `file-gutter-${props.side}`,
        },
      },
    ]);
  };
  return (
    <div className="monaco-box diff" data-model="whole" data-side={props.side}>
      <Editor
        path={inspectorModelUri(name, `${props.scope}/${props.path}`)}
        language={languageOf(props.path)}
        theme="stepbox"
        value={props.text}
        options={{ ...OPTIONS, lineNumbers: 'on' }}
        loading={<div className="state state-loading">Loading file…</div>}
        onMount={mark}
      />
    </div>
  );
}

/** A file's before/after in Monaco's diff editor; models keyed by branch/step/path (`scope`). */
export function FileDiffView(props: {
  readonly path: string;
  readonly scope: string;
  readonly before: string;
  readonly after: string;
}) {
  return (
    <div className="monaco-box diff" data-model="diff">
      <DiffEditor
        original={props.before}
        modified={props.after}
        originalModelPath={inspectorModelUri('diff-before', `${props.scope}/${props.path}`)}
        modifiedModelPath={inspectorModelUri('diff-after', `${props.scope}/${props.path}`)}
        // Keep the models on unmount: disposing them first makes Monaco throw while resetting the widget.
        keepCurrentOriginalModel
        keepCurrentModifiedModel
        language={languageOf(props.path)}
        theme="stepbox"
        options={{ ...OPTIONS, renderSideBySide: true, originalEditable: false, lineNumbers: 'on' }}
        loading={<div className="state state-loading">Loading diff…</div>}
      />
    </div>
  );
}
