import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openEngine } from '../../electron/engine/open-engine.js';
import { openIndex } from '../../electron/engine/trace/episode-index.js';
import { memoryProvider } from '../support/harness.js';
import { writeSampleEpisode } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-engine-index-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id).sort();

it('an engine indexes each branch it closes into its one index, also after a caller closed that index, and after the engine closed', async () => {
  const engine = openEngine({ home, provider: async () => memoryProvider });
  const first = await writeSampleEpisode(engine.store, { task: 'first' });
  const index = engine.index();
  expect(ids(index.listEpisodes())).toEqual([first.episode]);
  // What the CLI's commands do with the index they were given.
  index.close();
  const second = await writeSampleEpisode(engine.store, { task: 'second' });
  expect(ids(engine.index().listEpisodes())).toEqual([first.episode, second.episode].sort());
  await engine.close();
  const third = await writeSampleEpisode(engine.store, { task: 'third' });
  const fresh = openIndex(engine.home);
  try {
    expect(ids(fresh.listEpisodes())).toEqual([first.episode, second.episode, third.episode].sort());
  } finally {
    fresh.close();
  }
});
