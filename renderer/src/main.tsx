import { connectClient } from './client/connect';
import { createAppStores, type AppStores } from './stores/app-stores';
import './styles.css';

/**
 * How long the window's first render waits, once its code has run, for the rows of the branch
 * it was asked to open. Drawn before them, the window was laid out twice on the way to the
 * rows (the empty panes, then again with rows: ~190 ms of a 2-core machine's first render);
 * an open slower than this (a cold 10,000-step trace) shows the loading panes meanwhile.
 */
const FIRST_SCREEN_WAIT_MS = 300;

// The UI benchmark splits the first render at this mark: before it, the entry (the client
// and the stores; no React, no panels) loads and evaluates.
performance.mark('stepbox:boot');
const connection = connectClient();
const stores = createAppStores(connection.client);
// Asked before the window's code runs, so the server works while React and the panels
// evaluate and mount: `?open=<episode or branch>` opens it at once (links from the CLI,
// the UI benchmark).
const opening = new URLSearchParams(window.location.search).get('open');
stores.start(opening);
// The address says which branch is shown, so a reload (or the address kept as a link) opens
// it again: a reload showed "no episode open" beside a Running list that held it.
stores.stepper.subscribe((s, prev) => {
  if (s.branch === prev.branch) return;
  const url = new URL(window.location.href);
  if (s.branch) url.searchParams.set('open', s.branch);
  else url.searchParams.delete('open');
  window.history.replaceState(window.history.state, '', url);
});
const root = document.getElementById('root');
// The window's chunk is fetched beside this one (a modulepreload link, see vite.config.ts)
// but runs only once the calls above were sent: evaluating it first would hold the
// socket's open event, and so the open, for as long as it runs.
if (root)
  void connection
    .sent()
    .then(() => import('./mount-window'))
    .then(async (m) => {
      if (opening) await firstScreenOrAfter(stores, FIRST_SCREEN_WAIT_MS);
      return m;
    })
    .then(
      (m) => m.mountWindow(root, stores),
      (e: unknown) => {
        // A chunk that cannot load (a page left open across a rebuild): say so and the fix.
        root.textContent = `The stepbox window could not load its code (${e instanceof Error ? e.message : String(e)}). Fix: reload the page.`;
      },
    );

/** Settles once the open branch's first rows are in (or its open failed), or after `ms`. */
function firstScreenOrAfter(app: AppStores, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const off = app.stepper.subscribe((s) => {
      if (s.load !== 'loading') done();
    });
    if (app.stepper.getState().load !== 'loading') done();
    function done(): void {
      clearTimeout(timer);
      off();
      resolve();
    }
  });
}
