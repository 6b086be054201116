import { describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store';
import { writeSampleEpisode } from '../support/traces';
import { LayoutObject, servedApp, until } from '../support/e2e';

let episode: string;

describe("web mode: the timeline's window shows whole rows", () => {
  const web = servedApp({
    seed: async (home) => {
      // Longer than any window's list: it opens scrolled to its end.
      ({ episode } = await writeSampleEpisode(openEpisodeStore(home), { steps: 80 }));
    },
  });

  it('scrolled to its end, no row is a strip under the column header, at 1024×700 and 1920×1080 and back', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.openBranch(episode);
    await app.timeline.waitForStep(80);
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1920, height: 1080 },
      { width: 1024, height: 700 },
    ]) {
      const tag = await app.resize(size);
      // The viewed last step stays whole on screen through the resize (ui-layout's cycle).
      await until(
        () => layout.onScreen(app.timeline.row(80)),
        (whole) => whole,
        10_000,
        `${tag}: the last row whole on screen`,
      );
      expect(await app.timeline.cutRows(), `${tag}: rows cut at the end`).toEqual([]);
      // A person's own scroll to the end (the wheel, the scrollbar) ends on whole rows too.
      await app.timeline.scroller.evaluate((el) => el.scrollTo({ top: 0 }));
      await app.timeline.scroller.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      expect(await app.timeline.cutRows(), `${tag}: rows cut after a scroll to the end`).toEqual([]);
      expect(await layout.onScreen(app.timeline.row(80)), `${tag}: the last row`).toBe(true);
      await app.screenshot(`timeline-rows-end-${tag}`);
    }
    expect(app.errors).toEqual([]);
  });
});
