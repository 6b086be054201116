import * as monaco from 'monaco-editor';
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
