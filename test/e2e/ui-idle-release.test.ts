import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 33, item 8: sandboxes do not pile up. The Running list shows each live sandbox's age
 * and idle time, ticking; one left idle (here paused before its tools, waiting for a person)
 * for `ui.idle_release` is released with a notice that reopens it live at its step; a reload
 * keeps the live one and its window; closing the last window releases it after
 * `ui.release_after_close`. The served home's settings.json shortens both for the test.
 * Screenshots: `idle-release-<what>-<size>.png`.
 */

const IDLE_S = 30;

/** `42 s`, `3 min`, `1 h 05 min` as seconds (whole units, as the list says them). */
function seconds(span: string): number {
  const h = /(\d+) h/.exec(span);
  const m = /(\d+) min/.exec(span);
  const s = /(\d+) s$/.exec(span);
  return (h ? Number(h[1]) * 3600 : 0) + (m ? Number(m[1]) * 60 : 0) + (s ? Number(s[1]) : 0);
}

/** The stepbox-labelled containers running now (`docker ps`, full ids). */
function stepboxContainers(): string[] {
  return execFileSync('docker', ['ps', '-q', '--no-trunc', '--filter', 'label=stepbox=1'], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
}

/** Calls an operation beside the window, as `/api/<op>` with the page's token. */
async function api<T>(url: string, op: string, input: unknown): Promise<T> {
  const u = new URL(url);
  const res = await fetch(`${u.origin}/api/${op}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Stepbox-Token': u.searchParams.get('token') ?? '' },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { ok: boolean; value: T; error?: { message: string } };
  if (!body.ok) throw new Error(`${op}: ${body.error?.message}`);
  return body.value;
}

/** The container of a live branch (its sandbox as the services hold it). */
async function containerOf(url: string, branch: string): Promise<string> {
  const info = await api<{ sandbox: { id: string } | null }>(url, 'sandbox.info', { id: branch });
  if (!info.sandbox) throw new Error(`${branch} has no sandbox`);
  return info.sandbox.id;
}

/** True while a container whose id starts with `id` runs. */
const running = (id: string) => stepboxContainers().some((c) => c.startsWith(id) || id.startsWith(c));

async function branchOnScreen(app: AppPage): Promise<string> {
  return (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
}

describe('web mode: idle live sandboxes are released, reopen at their step, survive a reload', () => {
  const web = servedApp({ settings: { ui: { idle_release: `${IDLE_S}s`, release_after_close: '10s' } } });

  it('shows age and idle time, releases the idle one with a notice, reopens it, keeps it over a reload, releases it when the last window closes', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(90_000);
    await app.settled({ timeoutMs: 90_000 });
    const first = await branchOnScreen(app);
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1, 90_000);
    await app.settled({ timeoutMs: 90_000 });

    // Paused before step 2's tools: the classic forgotten sandbox, waiting for a decision.
    await app.stepper.stopBeforeTool.check();
    await app.page.keyboard.press('F10');
    await app.held.waitBeforeTool(2, 90_000);
    await until(
      () => app.library.runningBranches(),
      (r) => r.join() === first,
      30_000,
      'the branch running',
    );
    const container = await containerOf(web.url(), first);
    expect(running(container)).toBe(true);

    // Age and idle time tick on their own (no step, no reload): idle grows second by second.
    const item = app.library.runningItem(first);
    const t0 = await app.library.runningTimes(first);
    expect(t0.age).toMatch(/^\d+ (s|min)$/);
    expect(t0.idle).toMatch(/^\d+ s$/);
    const t1 = await until(
      () => app.library.runningTimes(first),
      (t) => seconds(t.idle) >= seconds(t0.idle) + 2,
      15_000,
      'the idle time ticking',
    );
    expect(seconds(t1.age)).toBeGreaterThanOrEqual(seconds(t1.idle));
    await expect(item.innerText()).resolves.toMatch(/since \d\d:\d\d · up \d+ (s|min) · idle \d+ s/);
    await expect(app.library.root.getByTestId('running-rule').innerText()).resolves.toBe(
      `A sandbox idle ${IDLE_S} s is released; its trace is kept to reopen.`,
    );
    const times = item.getByTestId('running-times');
    await times.scrollIntoViewIfNeeded();
    expect(await layout.readable(times)).toBe(true);
    // The pointer off the toolbar, so no button's reason line changes the shot.
    await app.page.mouse.move(60, 42);
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('idle-release-live-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    // Near the limit the list says when the release comes, in the warning colour.
    const soon = item.getByTestId('running-release-soon');
    await soon.waitFor({ timeout: 30_000 });
    await expect(soon.innerText()).resolves.toMatch(/^released in \d+ s unless it is used$/);
    expect(await layout.lines(soon)).toBe(1);
    await app.screenshot('idle-release-soon-1024x700');

    // Released: a notice names the episode and the step, the list is empty, the container gone.
    const notice = app.notices.ofKind('idle-release');
    await notice.waitFor({ timeout: 60_000 });
    const said = await notice.locator('.notice-text').innerText();
    expect(said).toMatch(
      new RegExp(
        `^hello-python \\(${first}\\) was idle \\d+ s, so its sandbox was released at step 1\\. Its trace is kept: reopen it to go on from there\\.$`,
      ),
    );
    // Released on time: at the limit, give or take one look of the releaser (a tenth of it).
    const idleSaid = Number(/idle (\d+) s/.exec(said)?.[1]);
    expect(idleSaid).toBeGreaterThanOrEqual(IDLE_S);
    expect(idleSaid).toBeLessThanOrEqual(IDLE_S + 5);
    const reopen = app.notices.action('idle-release');
    // In the Replay button's words (way-on.ts): one label for one action.
    await expect(reopen.innerText()).resolves.toBe('Reopen live at step 1');
    await until(
      () => app.library.runningBranches(),
      (r) => r.length === 0,
      30_000,
      'nothing running',
    );
    await until(
      async () => running(container),
      (r) => !r,
      30_000,
      'the container gone from docker ps',
    );
    await until(
      () => app.stepper.endReason.innerText().catch(() => ''),
      (t) => /left idle, so its sandbox was released/.test(t),
      30_000,
      'the end said in words',
    );
    expect(await layout.onScreen(reopen)).toBe(true);
    // Viewed at the step the release cut short (step 2, held before its tools, never completed):
    // Replay's Reopen and Fork, and Inject's Fork, act at step 1, as the notice does, and say so
    // (they were greyed with no reason on screen while only the notice's "Reopen at step 1" worked).
    await expect(app.replay.buttonWords('reopen')).resolves.toEqual({
      label: 'Reopen live at step 1',
      why: null,
    });
    await expect(app.replay.buttonWords('fork')).resolves.toEqual({ label: 'Fork at step 1', why: null });
    await expect(app.inject.forkButton.innerText()).resolves.toBe('Fork at step 1');
    await expect(app.inject.forkButton.getAttribute('aria-disabled')).resolves.toBeNull();
    // The episode ran here: it has ended (not "a recorded trace"), and every panel names the
    // same way on in the same words.
    await expect(app.inject.ended.locator('.state').innerText()).resolves.toBe(
      'This episode has ended: nothing can be injected into it. Fork it to inject there.',
    );
    await expect(app.sandbox.none.locator('.state').innerText()).resolves.toBe(
      'This episode has ended: it has no live sandbox. Reopen it to get one.',
    );
    // The terminal's header says so too (it read "recorded trace").
    await expect(app.terminal.root.getByTestId('terminal-mode').innerText()).resolves.toBe('episode ended');
    await expect(app.sandbox.reopenButton.innerText()).resolves.toBe('Reopen live at step 1');
    await expect(app.sandbox.reopenButton.getAttribute('aria-disabled')).resolves.toBeNull();
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await app.page.keyboard.press('F10');
    // The end line above says the episode ended; the hint says only the way on (it repeated
    // "This episode has ended" right under "This episode was interrupted: …").
    await expect
      .poll(() => app.stepper.hint.innerText())
      .toBe('To go on, press “Reopen live at step 1” or “Fork at step 1” under Replay.');
    await expect(app.stepper.endReason.innerText()).resolves.toMatch(/^This episode .*left idle/);
    await app.screenshot('idle-release-hint-once');
    // Step 2, held before its tools when the sandbox was released: the inspector shows the call
    // that was held and that it never ran (it said "No tool call in step 2", the call in the trace).
    await app.timeline.select(2);
    const never = app.inspector.neverRan;
    await never.waitFor({ timeout: 30_000 });
    await expect(never.innerText()).resolves.toMatch(
      /^Step 2 never ran: the agent decided this call, and the episode ended while the step was paused before it ran, so no tool ran and the sandbox did not change\.\s+Decided, never run: write_file\s+\{\s+"path": "greet\.py"/,
    );
    await expect(app.inspector.root.innerText()).resolves.not.toContain('No tool call');
    // Its row names the call decided (the tool cell was empty beside the inspector's call), and
    // says it never ran, whole ("incomple…" before).
    const neverRow = app.timeline.row(2);
    await expect(neverRow.getByTestId('row-tool-not-run').innerText()).resolves.toBe('write_file');
    await expect(app.timeline.rowStatus(2).innerText()).resolves.toBe('never ran');
    expect(await layout.readable(app.timeline.rowStatus(2))).toBe(true);
    await expect(app.replay.whatIfLine.innerText()).resolves.toBe(
      'What if…: step 2 never ran; its held call is in the inspector.',
    );
    await app.page.mouse.move(60, 42);
    await app.screenshot('idle-release-released-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('idle-release-released-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });

    // Reopen: live again at step 1 (the branch it continues on is made at its next step, or at
    // once), in the Running list at once, the notice gone, and it steps on from step 1.
    await reopen.click();
    const [reopened] = await until(
      () => app.library.runningBranches(),
      (r) => r.length === 1,
      90_000,
      'the reopened episode running',
    );
    await app.settled({ timeoutMs: 90_000 });
    await expect(app.notices.ofKind('idle-release').count()).resolves.toBe(0);
    expect(await containerOf(web.url(), reopened)).not.toBe(container);
    // Live at the step it was released at (what the timeline shows of a reopen is issue 33.3's).
    const state = await api<{ state: { step: number; state: string } | null }>(web.url(), 'episode.open', {
      id: reopened,
      last_rows: 1,
    });
    expect(state.state).toMatchObject({ step: 1 });
    await app.page.keyboard.press('F10');
    await app.held.waitBeforeTool(2, 90_000);
    await app.held.run();
    await app.timeline.waitForStep(2, 90_000);
    await app.settled({ timeoutMs: 90_000 });
    const second = await branchOnScreen(app);
    await until(
      () => app.library.runningBranches(),
      (r) => r.join() === second,
      30_000,
      'the branch stepped on running',
    );

    // A reload reattaches: the same branch on screen, live in the Running list, and usable.
    const reloaded = await containerOf(web.url(), second);
    await app.page.reload();
    await app.waitForReady();
    await until(
      () => branchOnScreen(app),
      (b) => b === second,
      30_000,
      'the branch on screen after the reload',
    );
    await until(
      () => app.library.runningBranches(),
      (r) => r.join() === second,
      30_000,
      'still running',
    );
    await app.settled({ timeoutMs: 90_000 });
    expect(await containerOf(web.url(), second)).toBe(reloaded);
    await app.stepper.stopBeforeTool.uncheck();
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(3, 90_000);
    await app.settled({ timeoutMs: 90_000 });
    expect(app.errors).toEqual([]);

    // The last window closes: after ui.release_after_close its sandbox goes, its trace kept.
    await app.page.close();
    await until(
      async () => running(reloaded),
      (r) => !r,
      60_000,
      'released after the last window closed',
    );
    const list = await api<{
      episodes: { branches: { branch: string; live: boolean; end_reason: string | null }[] }[];
    }>(web.url(), 'library.list', {});
    const closed = list.episodes.flatMap((e) => e.branches).find((b) => b.branch === second);
    expect(closed).toMatchObject({ live: false, end_reason: 'window_closed' });
  }, 420_000);
});
