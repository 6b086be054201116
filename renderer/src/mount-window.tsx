import { createRoot } from 'react-dom/client';
import { App } from './app';
import type { AppStores } from './stores/app-stores';

/** Draws the window into `root` over stores already started (main.tsx loads this chunk after asking for the open). */
export function mountWindow(root: HTMLElement, stores: AppStores): void {
  performance.mark('stepbox:window-loaded');
  createRoot(root).render(<App stores={stores} />);
}
