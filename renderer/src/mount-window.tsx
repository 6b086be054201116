import { createRoot } from 'react-dom/client';
import { App } from './app';
import type { AppStores } from './stores/app-stores';

// The window's code (React, the panels) has loaded and run: the UI benchmark's window span
// ends here, and main.tsx may wait a moment more for the open's rows before drawing.
performance.mark('stepbox:window-loaded');

/** Draws the window into `root` over stores already started (main.tsx loads this chunk after asking for the open). */
export function mountWindow(root: HTMLElement, stores: AppStores): void {
  createRoot(root).render(<App stores={stores} />);
}
