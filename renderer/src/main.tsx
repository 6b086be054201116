import { connectClient } from './client/connect';
import { createAppStores } from './stores/app-stores';
import './styles.css';

// The UI benchmark splits the first render at this mark: before it, the entry (the client
// and the stores; no React, no panels) loads and evaluates.
performance.mark('stepbox:boot');
const connection = connectClient();
const stores = createAppStores(connection.client);
// Asked before the window's code runs, so the server works while React and the panels
// evaluate and mount: `?open=<episode or branch>` opens it at once (links from the CLI,
// the UI benchmark).
stores.start(new URLSearchParams(window.location.search).get('open'));
const root = document.getElementById('root');
// The window's chunk is fetched beside this one (a modulepreload link, see vite.config.ts)
// but runs only once the calls above were sent: evaluating it first would hold the
// socket's open event, and so the open, for as long as it runs.
if (root)
  void connection
    .sent()
    .then(() => import('./mount-window'))
    .then(
      (m) => m.mountWindow(root, stores),
      (e: unknown) => {
        // A chunk that cannot load (a page left open across a rebuild): say so and the fix.
        root.textContent = `The stepbox window could not load its code (${e instanceof Error ? e.message : String(e)}). Fix: reload the page.`;
      },
    );
