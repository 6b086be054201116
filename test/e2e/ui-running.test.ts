import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 19, item 5: every live sandbox in sight. A fork leaves its parent live; the
 * library's "Running (n)" lists both (what each is, since when) with a Stop each, and a
 * Stop there releases that sandbox. Screenshots: `running-<what>-<size>.png`.
 */

function running(app: AppPage): Promise<string[]> {
  return app.library.root
    .locator('[data-testid="running-item"]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-branch') ?? ''));
}

describe('web mode: live sandboxes in sight', () => {
  const web = servedApp();

  it('lists every live branch with what it is and a Stop that releases it', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    // Counted once the library is read (before, it says it is reading, never a number).
    await until(
      () => app.library.root.getByTestId('running-count').innerText(),
      (n) => n === '0',
      30_000,
      'none running at first',
    );
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await app.settled({ timeoutMs: 90_000 });
    const main = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1, 90_000);
    await app.settled({ timeoutMs: 90_000 });
    await until(
      () => running(app),
      (r) => r.join() === main,
      30_000,
      'the main branch running',
    );

    // A fork: the window moves to it; its parent keeps its sandbox, and the list shows both.
    await app.timeline.select(1);
    await app.replay.fork();
    await app.settled({ timeoutMs: 90_000 });
    const fork = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
    expect(fork).not.toBe(main);
    await until(
      () => running(app),
      (r) => r.length === 2,
      30_000,
      'two running',
    );
    await expect(app.library.root.getByTestId('running-count').innerText()).resolves.toBe('2');
    // Every text the count takes after the reload, from the first render on: before the
    // library's lists arrive (they come after the open's rows are painted) it said "0".
    await app.page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { runningCounts: string[] }).runningCounts = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="running-count"]')?.textContent ?? null;
        if (text !== null && seen[seen.length - 1] !== text) seen.push(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    // The library's lists held after the reload (as on a loaded machine): the count says it is
    // reading, at both sizes, until they come.
    const held: string[] = [];
    let holding = true;
    let release: () => void = () => undefined;
    await app.page.routeWebSocket(/./, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((m) => {
        const text = String(m);
        if (holding && text.includes('library.list')) held.push(text);
        else server.send(text);
      });
      release = () => {
        holding = false;
        for (const m of held.splice(0)) server.send(m);
      };
    });
    // A reload shows the episode it showed (the address keeps it), not "no episode open".
    await app.page.reload();
    await until(
      () => app.stepper.episodeId.getAttribute('data-id'),
      (id) => id === fork,
      30_000,
      'the fork on screen after a reload',
    );
    await until(
      () => Promise.resolve(held.length),
      (n) => n > 0,
      30_000,
      'the library asked for',
    );
    const count = app.library.root.getByTestId('running-count');
    await expect(count.getAttribute('data-state')).resolves.toBe('loading');
    await expect(app.library.root.getByTestId('running-unknown').innerText()).resolves.toBe(
      'Checking which sandboxes are running…',
    );
    await app.screenshot('running-reading-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('running-reading-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    release();
    await app.settled({ timeoutMs: 90_000 });
    // A library search matching neither filters the episode list, never the live sandboxes.
    const search = app.library.root.getByTestId('library-search');
    await search.fill('zzz-no-such-episode');
    await app.library.root.getByText('No episode matches.', { exact: false }).waitFor({ timeout: 30_000 });
    // After the reload the library's lists come after the open's rows are painted: the count
    // is waited for, and must be the two live sandboxes, not a count the search narrowed.
    await until(
      () => app.library.root.getByTestId('running-count').innerText(),
      (n) => n === '2',
      30_000,
      'two running while the search matches no episode',
    );
    const counts = await app.page.evaluate(
      () => (window as unknown as { runningCounts: string[] }).runningCounts,
    );
    expect(counts[0], `the count's texts after the reload: ${counts.join(', ')}`).toBe('…');
    expect(counts.filter((c) => c !== '…')).toEqual(['2']);
    await search.fill('');
    // Cleared, the episode list is back at once: never "No episodes yet" with two running.
    await expect(app.library.root.getByTestId('library-episode').count()).resolves.toBeGreaterThan(0);
    expect(await app.library.root.getByText('No episodes yet', { exact: false }).count()).toBe(0);
    const item = (b: string) => app.library.root.locator(`[data-testid="running-item"][data-branch="${b}"]`);
    await expect(item(fork).innerText()).resolves.toMatch(
      /hello-python\s+fork at step 1 · on screen[\s\S]*since \d\d:\d\d/,
    );
    await expect(item(main).innerText()).resolves.toMatch(/hello-python\s+main[\s\S]*since \d\d:\d\d/);
    const stop = item(main).getByTestId('running-stop');
    await stop.scrollIntoViewIfNeeded();
    expect(await layout.onScreen(stop)).toBe(true);
    // Each id on one line, whole: at a hyphen, "ep-…-210142-" over "e2b8" read as two ids.
    for (const b of [main, fork]) {
      const id = item(b).locator(`[data-id="${b}"]`);
      await id.scrollIntoViewIfNeeded();
      expect(await layout.lines(id), `${b} on one line`).toBe(1);
      expect(await layout.readable(id), `${b} whole`).toBe(true);
    }
    await app.screenshot('running-two-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('running-two-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });

    // An entry opens its episode, as the Episodes tree does: a click anywhere on it (here its
    // clock line), or its name's button by keyboard.
    const onScreen = () => app.stepper.episodeId.getAttribute('data-id');
    await app.library.openRunning(main);
    await until(onScreen, (id) => id === main, 30_000, 'the main branch opened from the Running list');
    await app.timeline.waitForStep(1);
    await expect(item(main).innerText()).resolves.toMatch(/main · on screen/);
    await expect(app.library.runningOpen(main).getAttribute('aria-current')).resolves.toBe('true');
    await app.settled({ timeoutMs: 90_000 });
    await app.screenshot('running-opened-main-1024x700');
    await app.library.runningOpen(fork).focus();
    await app.page.keyboard.press('Enter');
    await until(onScreen, (id) => id === fork, 30_000, 'the fork opened from the Running list by keyboard');
    await expect(item(fork).innerText()).resolves.toMatch(/fork at step 1 · on screen/);
    await app.settled({ timeoutMs: 90_000 });

    // Stop the parent from the list: its sandbox goes, the fork on screen runs on (Stop does
    // not open the entry it sits in).
    await stop.click();
    await until(
      () => running(app),
      (r) => r.join() === fork,
      60_000,
      'only the fork running',
    );
    await until(
      () => app.library.branchStatus(main),
      (s) => s !== 'live',
      30_000,
      'the main branch stopped',
    );
    await expect(app.stepper.episodeState.innerText()).resolves.toMatch(/paused|idle/);
    await expect(onScreen()).resolves.toBe(fork);

    await app.page.keyboard.press('Shift+F5');
    await until(
      () => running(app),
      (r) => r.length === 0,
      60_000,
      'nothing running',
    );
    await expect(app.library.root.getByTestId('running-count').innerText()).resolves.toBe('0');
    // Sandboxes given back wait in the warm pool: `docker ps` shows them, and so does the list.
    await until(
      () =>
        app.library.root
          .getByTestId('running-warm')
          .innerText()
          .catch(() => ''),
      (t) => /^\d+ warm sandbox(es)? waits? idle for the next start \(no episode in/.test(t),
      30_000,
      'the warm sandboxes said',
    );
    // Stopped, the fork on screen has ended: its bar says how, and never "working…" (it read
    // "interrupted · working…" while the Stop's answer waited for the sandbox to be given back).
    await expect(app.stepper.episodeState.innerText()).resolves.toBe('interrupted');
    expect(await app.stepper.working.count()).toBe(0);
    await app.screenshot('running-warm-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
