import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { App } from '../../renderer/src/app';
import { createAppStores } from '../../renderer/src/stores/app-stores';
import { createFakeBackend } from '../support/renderer-fake-client';
import { episodeView } from '../support/renderer-fixtures';

/**
 * Issue 33.9: a window opened on a branch lays out and paints the timeline's rows before the
 * other panes are mounted (they come in the frame after). The server render is React's first
 * commit without its effects: what the first frame holds.
 */
describe("the window's first commit", () => {
  it('holds the stepper bar and the timeline with its rows, and none of the other panes', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(3, { state: null }));
    const stores = createAppStores(fake.client, { schedule: (f) => f(), afterPaint: () => undefined });
    await stores.stepper.getState().open('b1');
    expect(stores.stepper.getState().load).toBe('ready');
    // The pane layout reads the window's size and the sizes a person kept (none here).
    const g = globalThis as { window?: unknown };
    g.window = { innerWidth: 1600, innerHeight: 1000, localStorage: { getItem: () => null } };
    let html: string;
    try {
      html = renderToStaticMarkup(createElement(App, { stores }));
    } finally {
      delete g.window;
    }
    expect(html).toContain('data-testid="app-ready"');
    expect(html).toContain('data-testid="stepper-bar"');
    expect(html).toContain('data-testid="timeline"');
    for (const pane of [
      'episode-library',
      'breakpoints',
      'replay-controls',
      'terminal',
      'tool-inspector',
      'inject-panel',
      'sandbox-panel',
    ])
      expect(html, pane).not.toContain(`data-testid="${pane}"`);
    stores.dispose();
  });
});
