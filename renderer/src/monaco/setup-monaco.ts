// The editor API, its contributions and only the JSON language: importing 'monaco-editor'
// itself registers every language, whose CSS/HTML/TypeScript services each bundle a worker
// (the TypeScript one evaluates code with `new Function`, which the CSP forbids).
import * as monaco from 'monaco-editor/editor/editor.api';
import 'monaco-editor/features/register.all';
import 'monaco-editor/features/find/register';
// Contributions 'monaco-editor' adds besides features/register.all.
import 'monaco-editor/editor/contrib/caretOperations/browser/caretOperations';
import 'monaco-editor/editor/contrib/dropOrPasteInto/browser/copyPasteContribution';
import 'monaco-editor/editor/contrib/gotoError/browser/markerSelectionStatus';
import 'monaco-editor/editor/contrib/semanticTokens/browser/documentSemanticTokens';
import 'monaco-editor/languages/features/json/register';
import { loader } from '@monaco-editor/react';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import JsonWorker from 'monaco-editor/language/json/json.worker?worker';

declare global {
  interface Window {
    /** Monaco, for end-to-end tests that read model values. */
    __stepboxMonaco?: typeof monaco;
  }
}

/**
 * Bundles Monaco into the app (no CDN: the window is offline and under a strict CSP)
 * with its editor and JSON workers built as module workers.
 */
export function setupMonaco(): void {
  self.MonacoEnvironment = {
    getWorker(_id: string, label: string): Worker {
      return label === 'json' ? new JsonWorker() : new EditorWorker();
    },
  };
  loader.config({ monaco });
  monaco.editor.defineTheme('stepbox', {
    base: 'vs-dark',
    inherit: true,
    rules: [],
    colors: { 'editor.background': '#11141a', 'editor.lineHighlightBackground': '#1a1f29' },
  });
  window.__stepboxMonaco = monaco;
}
