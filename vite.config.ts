import { defineConfig, type HtmlTagDescriptor, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

/** The module main.tsx imports once its first calls are sent: React and the panels. */
const WINDOW_MODULE = '/src/mount-window.tsx';

/**
 * Links the window's chunk (and the chunks and CSS it imports) from index.html as
 * modulepreload, so the browser fetches and compiles it beside the small entry. Loaded
 * only on demand, it would be asked for after the open, behind the server's answer.
 */
function preloadWindow(): Plugin {
  return {
    name: 'stepbox-preload-window',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const chunks = Object.values(ctx.bundle ?? {}).flatMap((c) => (c.type === 'chunk' ? [c] : []));
        const win = chunks.find((c) => c.facadeModuleId?.endsWith(WINDOW_MODULE));
        if (!win) throw new Error(`vite: no chunk for ${WINDOW_MODULE} (is it still imported by main.tsx?)`);
        const files = [win.fileName, ...win.imports.filter((f) => f !== ctx.chunk?.fileName)];
        const tags: HtmlTagDescriptor[] = files.map((f) => ({
          tag: 'link',
          attrs: { rel: 'modulepreload', crossorigin: true, href: `./${f}` },
          injectTo: 'head',
        }));
        for (const css of win.viteMetadata?.importedCss ?? [])
          tags.push({
            tag: 'link',
            attrs: { rel: 'stylesheet', crossorigin: true, href: `./${css}` },
            injectTo: 'head',
          });
        return tags;
      },
    },
  };
}

/**
 * The wrappers of CommonJS modules (React, react-dom: ~200 KB of the window's chunk) as
 * `function` expressions in parentheses. Rolldown writes them as arrows in parentheses, which
 * V8 does not take as "called at once": it only pre-parsed the wrapper while the chunk streamed
 * in, and parsed react-dom's whole body again on the main thread when the window's code ran
 * (~40 ms on a 2-core machine, in the first render's path). A parenthesised `function` is
 * compiled with the rest of the chunk, off the main thread. The wrapper is called without a
 * `this` and reads no `arguments`, so the two forms behave alike.
 */
export function eagerWrapperCode(code: string): { code: string; arrowsLeft: boolean } {
  const eager = code.replace(
    /__commonJSMin\(\(\((exports(?:, module)?)\) => \{/g,
    '__commonJSMin((function($1) {',
  );
  return { code: eager, arrowsLeft: eager.includes('__commonJSMin(((') };
}

function eagerModuleWrappers(): Plugin {
  return {
    name: 'stepbox-eager-module-wrappers',
    apply: 'build',
    renderChunk(code, chunk) {
      const eager = eagerWrapperCode(code);
      if (eager.arrowsLeft)
        this.warn(`${chunk.fileName}: a module wrapper is still an arrow (see eagerModuleWrappers)`);
      return eager.code === code ? null : { code: eager.code, map: null };
    },
  };
}

// The renderer is built once into renderer/dist and served by Electron (app://) or the web
// mode. The config sits at the top level because it runs in Node, which renderer/ may not use.
export default defineConfig({
  root: fileURLToPath(new URL('./renderer', import.meta.url)),
  base: './',
  plugins: [react(), preloadWindow(), eagerModuleWrappers()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 8000 },
  worker: { format: 'es' },
});
