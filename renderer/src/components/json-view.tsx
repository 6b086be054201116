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
 * Read-only JSON in Monaco. `model` names a fixed model URI (`stepbox://inspector/<model>`)
 * so scrubbing reuses one model per view instead of creating one per step, and tests find it.
 */
export function JsonView(props: {
  readonly model: string;
  readonly value: string;
  readonly height?: number | string;
}) {
  return (
    <div className="monaco-box" style={{ height: props.height ?? 160 }} data-model={props.model}>
      <Editor
        path={`stepbox://inspector/${props.model}`}
        language="json"
        theme="stepbox"
        value={props.value}
        options={OPTIONS}
        loading={<div className="state state-loading">Loading editor…</div>}
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

/** A file's before/after in Monaco's diff editor (fixed model URIs, reused across steps). */
export function FileDiffView(props: {
  readonly path: string;
  readonly before: string;
  readonly after: string;
}) {
  const ext = props.path.split('.').pop() ?? '';
  return (
    <div className="monaco-box diff" style={{ height: 260 }} data-model="diff">
      <DiffEditor
        original={props.before}
        modified={props.after}
        originalModelPath="stepbox://inspector/diff-before"
        modifiedModelPath="stepbox://inspector/diff-after"
        // Keep the models on unmount: disposing them first makes Monaco throw while resetting the widget.
        keepCurrentOriginalModel
        keepCurrentModifiedModel
        language={LANGUAGES[ext] ?? 'plaintext'}
        theme="stepbox"
        options={{ ...OPTIONS, renderSideBySide: true, originalEditable: false, lineNumbers: 'on' }}
        loading={<div className="state state-loading">Loading diff…</div>}
      />
    </div>
  );
}
