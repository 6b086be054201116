import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until } from '../support/e2e';

describe('web mode: a batch', () => {
  const web = servedApp();

  it('starts a 2-episode batch of hello-python from the library, watches both slots finish, and opens one', async () => {
    const app = await web.open();
    await app.library.waitForTasks();
    await app.batches.start({ task: 'sample:hello-python', episodes: 2, concurrency: 2 });

    // Live progress: the summary appears while the batch runs, then both slots end.
    await app.batches.waitForSummary();
    const slots = await until(
      () => app.batches.slots(),
      (s) => s.length === 2 && s.every((x) => x.status === 'succeeded'),
      180_000,
      'both batch slots succeeded',
    );
    await until(
      () => app.batches.state(),
      (s) => s === 'done',
      30_000,
      'batch done',
    );
    await expect(app.batches.summary()).resolves.toEqual({ success: '100%', progress: 'done 2/2' });
    const episodes = slots.map((s) => s.episode);
    expect(new Set(episodes).size).toBe(2);

    // Both episodes are in the library.
    await until(
      () => app.library.episodes(),
      (ids) => episodes.every((e) => ids.includes(e)),
      30_000,
      'batch episodes in the library',
    );
    // Two episodes of one task, headed alike but for their ids ("hello-python main return 1.61"):
    // each heading says what tells it apart, by the one rule (model/episode-heading.ts).
    const apart = await Promise.all(episodes.map((e) => app.library.episodeApart(e).innerText()));
    for (const a of apart) expect(a.trim()).toMatch(/^· (started \d\d:\d\d(:\d\d)?|run [12] of 2)$/);
    expect(new Set(apart).size).toBe(2);
    await app.library.episodeHead(episodes[0]).scrollIntoViewIfNeeded();
    // Whose return the heading shows, as a person reads it (it read "main return 1.61").
    await expect(
      app.library.episodeHead(episodes[0]).getByTestId('episode-main-return').innerText(),
    ).resolves.toMatch(/^main branch: return \d+\.\d\d/);
    await app.screenshot('batch-episodes-apart');
    // Its end is said where it is seen whatever the library's scroll: the Batches section sits at
    // the library's foot, and batch-done showed nothing of the batch that had just finished.
    await until(
      () => app.notices.ofKind('batch').locator('.notice-text').allInnerTexts(),
      (t) => t.length === 1,
      10_000,
      "the batch's end in the notification area",
    );
    await expect(app.notices.ofKind('batch').locator('.notice-text').innerText()).resolves.toMatch(
      /^Batch of hello-python done: 2 of 2 episodes succeeded; (no QA flags|QA flags: [^.]+)\.$/,
    );
    await app.screenshot('batch-done');
    await app.resize({ width: 1024, height: 700 });
    await app.screenshot('batch-done-1024x700');
    // "Show the batch": from a library scrolled to its top (the Batches section out of view),
    // the batch's summary is brought on screen and has the keyboard.
    await app.panel('episode-library').evaluate((el) => {
      for (const box of [el, ...Array.from(el.querySelectorAll('*'))])
        if (box.scrollTop > 0) box.scrollTop = 0;
    });
    const summary = app.page.getByTestId('batch-summary');
    await app.notices.action('batch').click();
    await until(
      () => new LayoutObject(app.page).onScreen(summary),
      (on) => on,
      10_000,
      'the batch summary on screen after Show the batch',
    );
    await expect(summary.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await app.screenshot('batch-done-shown-1024x700');

    // A slot opens its episode in the timeline.
    await app.batches.openSlot(episodes[1]);
    await app.library.waitForCurrent(episodes[1]);
    await until(
      () => app.timeline.rows(),
      (r) => r.length > 0,
      30_000,
      'timeline rows of the slot',
    );
    expect(app.errors).toEqual([]);
  });
});
