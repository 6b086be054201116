import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import type { EpisodeEntry, UnreadableEpisode } from '../../shared/contract/models.js';
import { breakLine, writeSampleEpisode } from '../support/traces.js';

// The CLI's views exit 3 naming the bad line; the window's library left the episode out with
// only a warning on the server's stderr.
describe('a trace that fails validation is listed as unreadable, not dropped', () => {
  it('names the episode, the file, the line and what to do, and lists the readable ones as before', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-unreadable-'));
    const services = createAppServices(engineServicesPorts({ home }));
    try {
      const store = openEpisodeStore(home, { skipMarkInterrupted: true });
      const good = await writeSampleEpisode(store, { steps: 1 });
      const bad = await writeSampleEpisode(store, { steps: 2, end: null });
      const file = store.resolve(bad.branch).tracePath;
      breakLine(file, 5);
      const answer = await services.handle('library.list', {});
      if (!answer.ok) throw new Error(answer.error.message);
      const value = answer.value as { episodes: EpisodeEntry[]; unreadable?: UnreadableEpisode[] };
      expect(value.episodes.map((e) => e.episode)).toEqual([good.episode]);
      expect(value.unreadable).toHaveLength(1);
      const u = value.unreadable?.[0];
      expect(u?.episode).toBe(bad.episode);
      expect(u?.file).toBe(file);
      expect(u?.message).toContain(`${file}: line 5 (tool_reslt) does not match`);
      expect(u?.fix).toMatch(/npx stepbox bundle import FILE --force/);
      // The search box finds it by its id too.
      const searched = await services.handle('library.list', { query: bad.episode.slice(-4) });
      if (!searched.ok) throw new Error(searched.error.message);
      expect((searched.value as { unreadable?: UnreadableEpisode[] }).unreadable).toHaveLength(1);
    } finally {
      await services.dispose();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
