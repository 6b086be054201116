import { createRoot } from 'react-dom/client';
import { App } from './app';
import { connectClient } from './client/connect';
import { createAppStores } from './stores/app-stores';
import './styles.css';

// The UI benchmark splits the first render at this mark: before it, the bundle loads and evaluates.
performance.mark('stepbox:boot');
const stores = createAppStores(connectClient());
// Asked before the first render, so the server works while the panels mount:
// `?open=<episode or branch>` opens it at once (links from the CLI, the UI benchmark).
stores.start(new URLSearchParams(window.location.search).get('open'));
const root = document.getElementById('root');
if (root) createRoot(root).render(<App stores={stores} />);
