import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// The renderer is built once into renderer/dist and served by Electron (app://) or the web
// mode. The config sits at the top level because it runs in Node, which renderer/ may not use.
export default defineConfig({
  root: fileURLToPath(new URL('./renderer', import.meta.url)),
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 8000 },
  worker: { format: 'es' },
});
