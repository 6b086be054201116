import { createRoot } from 'react-dom/client';
import { App } from './app';
import { connectClient } from './client/connect';
import { createAppStores } from './stores/app-stores';
import './styles.css';

const stores = createAppStores(connectClient());
const root = document.getElementById('root');
if (root) createRoot(root).render(<App stores={stores} />);
