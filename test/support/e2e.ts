/**
 * End-to-end support: the web mode (`stepbox serve --port 0`) in a child process, Debian's
 * Chromium through playwright-core, and one page object per panel that reads real state
 * (xterm's buffer, Monaco's models, timeline rows) rather than pixels.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS } from '../../electron/bench/chromium.js';
import { KEEP_WHOLE } from '../../renderer/src/layout/reveal-whole';
import { factsText, frozenWhy, paintFacts, screencastShot } from './paint-facts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where screenshots go (kept as test artifacts). */
export const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');

/** A running `stepbox serve`. */
export interface Served {
  readonly url: string;
  readonly home: string;
  readonly stderr: () => string;
  close(): Promise<void>;
}

/** A fresh STEPBOX_HOME, removed by the caller. */
export function tempHome(prefix = 'stepbox-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Starts `stepbox serve --port 0`; resolves with the URL from its first stdout line. */
export async function startServe(
  options: { home?: string; env?: Record<string, string> } = {},
): Promise<Served> {
  if (!existsSync(join(ROOT, 'renderer/dist/index.html')))
    throw new Error('the renderer is not built: run `npm run build` before the e2e tests');
  const home = options.home ?? tempHome();
  const child: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, 'bin/stepbox.js'), 'serve', '--port', '0'],
    {
      cwd: ROOT,
      env: { ...process.env, STEPBOX_HOME: home, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`stepbox serve printed no URL in 30 s; stderr:\n${err}`)),
      30_000,
    );
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(line.trim());
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stepbox serve exited with ${code}; stderr:\n${err}`));
    });
  });
  return {
    url,
    home,
    stderr: () => err,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Debian's Chromium, headless, as the brief requires. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
}

/** A page of the app with its uncaught errors collected. */
export interface AppPage {
  readonly page: Page;
  readonly errors: string[];
  readonly library: LibraryPanel;
  readonly timeline: TimelinePanel;
  readonly terminal: TerminalPanel;
  readonly inspector: InspectorPanel;
  readonly inject: InjectPanel;
  readonly replay: ReplayPanel;
  /** Candidates and compare, in their view of their own. */
  readonly sideBySide: SideBySideView;
  readonly sandbox: SandboxPanel;
  readonly batches: BatchesSection;
  readonly stepper: StepperBar;
  readonly held: HeldActionCard;
  readonly breakpoints: BreakpointsSection;
  /** The notification area at the foot of the window. */
  readonly notices: NoticeBar;
  /** One of the seven panels (see {@link PANELS}), by its test id. */
  panel(testId: (typeof PANELS)[number]): Locator;
  /** The sheet "?" opens: every key and what it does. */
  readonly keySheet: Locator;
  /** Waits until the page says it is ready (after a load or a reload). */
  waitForReady(): Promise<void>;
  screenshot(name: string): Promise<string>;
  /** Sets the viewport and waits until the page has it; returns its tag for names (`1024x700`). */
  resize(size: { readonly width: number; readonly height: number }): Promise<string>;
  /**
   * The stepper bar at rest: paused or idle (or ended, with `ended`), no request in flight;
   * with `task`, only while it shows a task whose name starts with `task`.
   */
  stepperAtRest(options?: { ended?: boolean; task?: string }): Locator;
  /** Waits until the stepper is at rest (see {@link stepperAtRest}). */
  settled(options?: { ended?: boolean; timeoutMs?: number }): Promise<void>;
  /** Once at rest, presses F10 and waits until the timeline shows `step` and the stepper is at rest again. */
  stepTo(step: number, ms?: number): Promise<void>;
}

/** Opens the app and waits for its ready marker. */
export async function openApp(
  browser: Browser,
  url: string,
  viewport = { width: 1600, height: 1000 },
  /** Runs on the new page before it loads (e.g. a WebSocket route that holds some frames). */
  prepare?: (page: Page) => Promise<void>,
): Promise<AppPage> {
  const page = await browser.newPage({ viewport });
  await prepare?.(page);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  // A CSP violation (an inline script, eval) shows only on the console.
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to (execute|evaluate|load)/.test(m.text()))
      errors.push(`csp: ${m.text()}`);
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  await page.waitForSelector('[data-testid="app-ready"]');
  const stepperAtRest = ({ ended = false, task }: { ended?: boolean; task?: string } = {}): Locator => {
    const states = ['paused', 'idle', ...(ended ? ['ended'] : [])];
    const bar = page.locator(
      `[data-testid="stepper-bar"]:is(${states.map((s) => `[data-state="${s}"]`).join(', ')})[data-busy="false"]`,
    );
    return task === undefined ? bar : bar.filter({ has: page.locator(`.where-task[title^="${task}"]`) });
  };
  return {
    page,
    errors,
    library: new LibraryPanel(page),
    timeline: new TimelinePanel(page),
    terminal: new TerminalPanel(page),
    inspector: new InspectorPanel(page),
    inject: new InjectPanel(page),
    replay: new ReplayPanel(page),
    sideBySide: new SideBySideView(page),
    sandbox: new SandboxPanel(page),
    batches: new BatchesSection(page),
    stepper: new StepperBar(page),
    held: new HeldActionCard(page),
    breakpoints: new BreakpointsSection(page),
    notices: new NoticeBar(page),
    panel: (testId) => page.getByTestId(testId),
    keySheet: page.getByTestId('key-sheet'),
    async waitForReady() {
      await page.waitForSelector('body[data-ready="true"]');
    },
    async resize(size) {
      await page.setViewportSize(size);
      await until(
        () => page.evaluate(() => innerWidth),
        (w) => w === size.width,
        5_000,
        `viewport ${size.width}`,
      );
      return `${size.width}x${size.height}`;
    },
    async screenshot(name) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      const path = join(SCREENSHOTS, `${name}.png`);
      try {
        await page.screenshot({ path });
      } catch (e) {
        if (!(e instanceof Error) || e.name !== 'TimeoutError') throw e;
        // A capture that does not come is judged by what the window does meanwhile (CI, twice,
        // right after a resize, its main thread answering; not seen in 40 runs here, half of
        // them loaded): a window that paints no frame, is busy the whole second or lays itself
        // out without end is frozen for a person too, and fails saying so (paint-facts.ts). One
        // that paints and idles was left by Chromium's capture: its picture is the screencast's
        // next frame (the compositor's own), said in the log; none in 5 s fails saying so.
        const facts = await paintFacts(page);
        const frozen = frozenWhy(facts);
        if (frozen) throw new Error(`screenshot ${name}: ${frozen}`, { cause: e });
        if (!(await screencastShot(page, path)))
          throw new Error(
            `screenshot ${name}: no capture in 30 s and no screencast frame in 5 s, though the window paints (${factsText(facts)})`,
            { cause: e },
          );
        console.warn(
          `[e2e] screenshot ${name}: Chromium's capture stalled (the window paints: ${factsText(facts)}); kept its screencast frame`,
        );
      }
      return path;
    },
    stepperAtRest,
    async settled({ ended = false, timeoutMs = 60_000 } = {}) {
      await stepperAtRest({ ended }).waitFor({ timeout: timeoutMs });
    },
    async stepTo(step, ms = 90_000) {
      await stepperAtRest().waitFor({ timeout: ms });
      await page.keyboard.press('F10');
      await page.locator(`[data-testid="timeline-row"][data-step="${step}"]`).waitFor({ timeout: ms });
      await stepperAtRest().waitFor({ timeout: ms });
    },
  };
}

/** The app as {@link servedApp} serves it to the enclosing `describe`. */
export interface ServedApp {
  /** Opens a new page of the app (see {@link openApp}). */
  open(viewport?: { width: number; height: number }): Promise<AppPage>;
  /** The served STEPBOX_HOME (e.g. to install agent recipes into it); only inside a test. */
  home(): string;
  /** The served page URL with its token (for `/api/*` calls beside the window); only inside a test. */
  url(): string;
  /**
   * Stops the server and serves the same home again (a restart of the app or server): a new
   * port and token, so pages opened before are gone; {@link open} opens the new one.
   */
  restart(): Promise<void>;
}

/**
 * For the enclosing `describe`: a fresh home served by `stepbox serve` and a browser,
 * started before its tests and closed (home removed) after them.
 */
export function servedApp(
  options: {
    readonly settings?: unknown;
    /** Fills the home before it is served (episodes written into its store, listed at the start). */
    readonly seed?: (home: string) => Promise<void>;
    /** The server's environment besides STEPBOX_HOME (a person's HOME, where Choose… → Your folders starts). */
    readonly env?: Record<string, string>;
  } = {},
): ServedApp {
  let browser: Browser | undefined;
  let served: Served | undefined;
  let home: string | undefined;
  beforeAll(async () => {
    home = tempHome();
    // The served home's settings.json (README "Settings"), e.g. a short ui.idle_release.
    if (options.settings !== undefined)
      writeFileSync(join(home, 'settings.json'), JSON.stringify(options.settings));
    await options.seed?.(home);
    served = await startServe({ home, ...(options.env ? { env: options.env } : {}) });
    browser = await launchBrowser();
  });
  // A journey that fails leaves what its pages showed (a failure seen once in a full run under
  // load, and never alone, is otherwise a timeout and a selector, nothing to judge it by).
  beforeEach((ctx) => {
    ctx.onTestFailed(() => keepFailedPages(browser, ctx.task.name));
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    if (home) removeHome(home);
  });
  return {
    open(viewport) {
      if (!browser || !served) throw new Error('servedApp().open() runs only inside a test');
      return openApp(browser, served.url, viewport);
    },
    home() {
      if (!home) throw new Error('servedApp().home() runs only inside a test');
      return home;
    },
    url() {
      if (!served) throw new Error('servedApp().url() runs only inside a test');
      return served.url;
    },
    async restart() {
      if (!served || !home) throw new Error('servedApp().restart() runs only inside a test');
      await served.close();
      served = await startServe({ home, ...(options.env ? { env: options.env } : {}) });
    },
  };
}

/**
 * Every page still open in `browser` when a test failed: a screenshot and its visible text,
 * as `failed-<test>-<n>.png|txt` beside the journeys' screenshots. Best effort: a frozen page
 * gives what it can within 10 s, and nothing here hides the test's own error.
 */
async function keepFailedPages(browser: Browser | undefined, test: string): Promise<void> {
  if (!browser) return;
  const name = `failed-${test.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const pages = browser.contexts().flatMap((c) => c.pages());
  for (const [i, page] of pages.entries()) {
    const base = join(SCREENSHOTS, `${name}-${i}`);
    await page.screenshot({ path: `${base}.png`, timeout: 10_000 }).catch(() => undefined);
    const text = await page
      .evaluate(() => document.body.innerText)
      .catch((e: unknown) => `(no text: ${e instanceof Error ? e.message : String(e)})`);
    writeFileSync(`${base}.txt`, text.slice(0, 50_000));
    console.error(`[e2e] ${test} failed: its page ${i} is kept as ${base}.png and .txt`);
  }
}

/** The seven panels' test ids. */
export const PANELS = [
  'episode-library',
  'timeline',
  'terminal',
  'tool-inspector',
  'inject-panel',
  'replay-controls',
  'sandbox-panel',
] as const;

/**
 * A bundled case as a person runs it: its card clicked, its walkthrough shown, then Continue (F5)
 * to the end of its broken run, where QA has flagged it.
 */
export async function runCase(app: AppPage, id: string): Promise<void> {
  await app.library.openCase(id);
  await app.library.walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
  await app.settled({ timeoutMs: 90_000 });
  await app.page.keyboard.press('F5');
  await app.stepper.waitForEnd(120_000);
  await app.settled({ ended: true });
}

/**
 * Continues (F5) and waits for the next held step (its heading other than `prev`) or the end;
 * returns the held step's heading, or null once the episode ended.
 */
export async function continueToNextHold(app: AppPage, prev: string): Promise<string | null> {
  await app.page.keyboard.press('F5');
  await app.page.waitForFunction(
    (was) => {
      if (document.querySelector('[data-testid="stepper-bar"][data-state="ended"]')) return true;
      const h = document.querySelector('[data-testid="tool-inspector"] [data-testid="held-action"] h3');
      return h !== null && h.textContent !== was;
    },
    prev,
    { timeout: 90_000 },
  );
  if ((await app.page.locator('[data-testid="stepper-bar"][data-state="ended"]').count()) > 0) return null;
  await app.settled();
  return (await app.held.heading.textContent()) ?? '';
}

/** Polls `read` until `accept` holds (bounded); returns the last value. */
export async function until<T>(
  read: () => Promise<T>,
  accept: (v: T) => boolean,
  ms = 30_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  let last: T = await read();
  while (!accept(last)) {
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await read();
  }
  return last;
}

/**
 * Records every text the elements with these test ids show from now on (each DOM change, as
 * the window commits it: a moment too short for a screenshot is kept too), and whether each
 * was ever present. `read()` returns the texts seen, in order, per test id.
 */
export async function watchTexts(
  page: Page,
  testIds: readonly string[],
): Promise<{ read(): Promise<Record<string, string[]>> }> {
  await page.evaluate((ids) => {
    const seen: Record<string, string[]> = Object.fromEntries(ids.map((id) => [id, []]));
    const note = () => {
      for (const id of ids)
        for (const el of Array.from(document.querySelectorAll(`[data-testid="${id}"]`))) {
          const text = (el as HTMLElement).innerText.trim();
          const list = seen[id];
          if (list[list.length - 1] !== text) list.push(text);
        }
    };
    note();
    new MutationObserver(note).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
    });
    (window as unknown as { __watchedTexts: typeof seen }).__watchedTexts = seen;
  }, testIds);
  return {
    read: () =>
      page.evaluate(() => (window as unknown as { __watchedTexts: Record<string, string[]> }).__watchedTexts),
  };
}

/**
 * The computed colour of each reward component drawn by `found` (elements naming it in
 * `data-component`): a legend swatch's background, or a bar's own fill.
 */
/** The visible words of each reward component's element, by its key (`data-component`). */
function componentTexts(found: Locator): Promise<Record<string, string>> {
  return found.evaluateAll((els) =>
    Object.fromEntries(
      els.map((e) => [e.getAttribute('data-component') ?? '', (e.textContent ?? '').trim()]),
    ),
  );
}

function componentColours(found: Locator, drawn: 'swatch' | 'fill'): Promise<Record<string, string>> {
  return found.evaluateAll(
    (els, how) =>
      Object.fromEntries(
        els.map((e) => [
          e.getAttribute('data-component') ?? '',
          how === 'fill'
            ? getComputedStyle(e).fill
            : getComputedStyle(e.querySelector('i') as HTMLElement).backgroundColor,
        ]),
      ),
    drawn,
  );
}

class PanelObject {
  constructor(
    readonly page: Page,
    readonly testId: string,
  ) {}
  get root(): Locator {
    return this.page.getByTestId(this.testId);
  }
  text(): Promise<string> {
    return this.root.innerText();
  }
  /** A branch's node in the panel's branch trees (the library's, the timeline's). */
  branchNode(branch: string): Locator {
    return this.root.locator(`[data-testid="branch-node"][data-branch="${branch}"]`);
  }
  /** The name a branch's node gives it beside its id (`fork 2 at step 1`, a candidate's number and action). */
  branchName(branch: string): Locator {
    return this.branchNode(branch).getByTestId('branch-name');
  }
}

/** One batch slot as the batches section shows it. */
export interface SlotText {
  readonly status: string;
  readonly episode: string;
}

/** The batches section of the library: form, progress, summary and slots. */
export class BatchesSection extends PanelObject {
  constructor(page: Page) {
    super(page, 'batches');
  }
  /** The tasks the form offers, as a person reads them (`case: Context overflow drops the goal`). */
  taskChoices(): Promise<string[]> {
    return this.root.getByTestId('batch-task').locator('option').allInnerTexts();
  }
  /** Fills the form (`task`: `sample:ID` or `case:ID`) and starts the batch. */
  async start(options: {
    task: string;
    episodes: number;
    concurrency: number;
    agent?: string;
  }): Promise<void> {
    await this.root.getByTestId('batch-task').selectOption(options.task);
    await this.root.getByTestId('batch-episodes').fill(String(options.episodes));
    await this.root.getByTestId('batch-concurrency').fill(String(options.concurrency));
    if (options.agent !== undefined) await this.agentField.fill(options.agent);
    await this.root.getByTestId('batch-start').click();
  }
  /** The form's "Agent" field. */
  get agentField(): Locator {
    return this.root.getByTestId('batch-agent');
  }
  /** The shown batch's slots. */
  slots(): Promise<SlotText[]> {
    return this.root.locator('[data-testid="batch-slot"]').evaluateAll((els) =>
      els.map((e) => ({
        status: e.getAttribute('data-status') ?? '',
        episode: e.getAttribute('data-episode') ?? '',
      })),
    );
  }
  /** The shown batch's state (`running`, `done`, …). */
  state(): Promise<string | null> {
    return this.root.getByTestId('batch-summary').getAttribute('data-state');
  }
  async openSlot(episode: string): Promise<void> {
    await this.root.locator(`[data-testid="batch-slot"][data-episode="${episode}"]`).click();
  }
  /** Waits for the batch's summary (it shows once the batch runs). */
  async waitForSummary(ms = 30_000): Promise<void> {
    await this.root.getByTestId('batch-summary').waitFor({ timeout: ms });
  }
  /** The summary's success rate and progress, as shown (`100%`, `done 2/2`). */
  async summary(): Promise<{ success: string; progress: string }> {
    return {
      success: await this.root.getByTestId('batch-success').innerText(),
      progress: await this.root.getByTestId('batch-progress').innerText(),
    };
  }
}

/** The episode library. */
export class LibraryPanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'episode-library');
  }
  /** An episode listed as unreadable (its trace fails validation), with why and what to do. */
  unreadable(episode: string): Locator {
    return this.root.locator(`[data-testid="library-unreadable"][data-episode="${episode}"]`);
  }
  /** A branch listed as unreadable (a corrupt fork: under its episode's tree), by its own id. */
  unreadableBranch(branch: string): Locator {
    return this.root.locator(`[data-testid="library-unreadable"][data-branch="${branch}"]`);
  }
  async startTask(id: string): Promise<void> {
    await this.taskCard(id).click();
  }
  /** "Open…": a project folder or a task.json by its path. */
  get openButton(): Locator {
    return this.root.getByTestId('projects-open');
  }
  /** Open…'s dialog. */
  get openDialog(): Locator {
    return this.page.getByTestId('open-dialog');
  }
  /** Open…'s path field (completion below it). */
  get openPath(): Locator {
    return this.page.getByTestId('open-path');
  }
  /** Open…'s completions of the typed path. */
  get openSuggestions(): Locator {
    return this.page.getByTestId('open-suggestion');
  }
  /** An opened project's item, by its absolute path. */
  project(path: string): Locator {
    return this.root.locator(`[data-testid="project"][data-path="${path}"]`);
  }
  /** Where an opened project is, as its item says it (`folder · weather-notes`; the full path on hover). */
  projectPath(path: string): Locator {
    return this.project(path).locator('.project-path');
  }
  /** An opened project's Start. */
  projectStart(path: string): Locator {
    return this.project(path).getByTestId('project-start');
  }
  /** The words beside a greyed Start, in view without hovering it ("needs a goal"). */
  projectStartWhy(path: string): Locator {
    return this.project(path).getByTestId('project-start-why');
  }
  /** A bare folder's Goal field, in its item. */
  projectGoal(path: string): Locator {
    return this.project(path).getByTestId('project-goal');
  }
  /** A bare folder's optional "Check (command)" field (the CLI's --verify), in its item. */
  projectCheck(path: string): Locator {
    return this.project(path).getByTestId('project-check');
  }
  /** Why an opened project's last Start failed (a build's last lines and the fix), in its item. */
  projectError(path: string): Locator {
    return this.project(path).getByTestId('project-error');
  }
  /** An opened project's Remove (forgets it; its folder stays on disk). */
  projectRemove(path: string): Locator {
    return this.project(path).getByTestId('project-remove');
  }
  /** Open…'s hint under the path: what it opens. */
  get openHint(): Locator {
    return this.page.locator('#open-path-hint');
  }
  /** The start form's red blocks that say `text` (a refusal said once, not twice). */
  errorBlocks(text: string | RegExp): Locator {
    return this.root.locator('.state-error').filter({ hasText: text });
  }
  /** Why an opened project's task cannot start (a task.json that does not read), in its item. */
  projectProblem(path: string): Locator {
    return this.project(path).getByTestId('project-problem');
  }
  /** What of an opened project stepbox leaves out (its reader's warnings), one line each, on its card. */
  projectWarnings(path: string): Locator {
    return this.project(path).getByTestId('project-warnings').getByTestId('world-warning');
  }
  /** A start's refusal shown under the start-form field it names (Agent, …). */
  get startFieldError(): Locator {
    return this.root.getByTestId('start-field-error');
  }
  /** Opens `path` through Open… (typed, then Open). */
  async openProject(path: string): Promise<void> {
    await this.openButton.click();
    await this.openPath.fill(path);
    await this.page.getByTestId('open-submit').click();
    await this.project(path).waitFor();
  }
  /** A task's card in the start list (click starts it). */
  taskCard(id: string): Locator {
    return this.root.locator(`[data-testid="library-task"][data-task="${id}"]`);
  }
  /** What a task's card says it will read before the start (`reads /path/to/script`). */
  startReads(id: string): Locator {
    return this.taskCard(id).getByTestId('start-reads');
  }
  /** The path alone in what a task's card says it reads (from the task's folder when inside it). */
  startReadsPath(id: string): Locator {
    return this.startReads(id).getByTestId('start-path');
  }
  /** Why a start on a task would refuse the typed paths, said on its card before the click. */
  startRefusal(id: string): Locator {
    return this.taskCard(id).getByTestId('start-refusal');
  }
  /** A refusal every task's card would say (a path outside every place), said once under its field. */
  get startRefusalForAll(): Locator {
    return this.root.getByTestId('start-refusal-all');
  }
  /** What every sample task's start reads and where its agent files come from, when one for all: said once above the cards. */
  get startReadsForAll(): Locator {
    return this.root.getByTestId('start-reads-all');
  }
  /** With Docker down: the one line, above the cases, that running needs it and the fix. */
  get dockerNeeded(): Locator {
    return this.root.getByTestId('docker-needed');
  }
  /** Which folder a task's card says a sandbox: agent's files come from. */
  startAgentFolder(id: string): Locator {
    return this.taskCard(id).getByTestId('start-agent-folder');
  }
  /**
   * Fills the start form's agent fields: "Agent", and when given "Its model calls answered
   * by" and "Agent folder" (they show for agents that run their own program).
   */
  async chooseAgent(agent: string, options: { model?: string; agentDir?: string } = {}): Promise<void> {
    await this.agentField.fill(agent);
    if (options.model !== undefined) await this.modelField.fill(options.model);
    if (options.agentDir !== undefined)
      await this.root.getByTestId('library-agent-dir').fill(options.agentDir);
  }
  /** The start form's "Agent" field. */
  get agentField(): Locator {
    return this.root.getByTestId('library-agent');
  }
  /** Under the Agent field whose file was chosen in Your folders: for which tasks, and Forget. */
  get agentChosen(): Locator {
    return this.root.getByTestId('chosen-note-agent');
  }
  /** The Agent field's own heading and what it says it starts (sample tasks and projects, not cases). */
  get agentHeading(): Locator {
    return this.root.getByTestId('library-agent-heading');
  }
  get agentApplies(): Locator {
    return this.root.getByTestId('library-agent-applies');
  }
  /** Beside an opened project's Start: the agent it starts with (`with oracle`). */
  projectAgent(path: string): Locator {
    return this.project(path).getByTestId('project-agent');
  }
  /** The start form's "Its model calls answered by" field. */
  get modelField(): Locator {
    return this.root.getByTestId('library-model');
  }
  /** The list's search field. */
  get searchField(): Locator {
    return this.root.getByTestId('library-search');
  }
  /** The Agent field's whole spec, said under the field when it is longer than the field shows. */
  get agentWhole(): Locator {
    return this.root.getByTestId('library-agent-whole');
  }
  /** The file picker "pick…" opens (a task, a folder or a file). */
  get filePicker(): Locator {
    return this.page.getByTestId('file-picker');
  }
  /** The file picker's entry `name` (a file or a folder of the listing). */
  pickerEntry(name: string): Locator {
    return this.filePicker.locator(`[data-testid="picker-entry"][data-name="${name}"]`);
  }
  /**
   * The file picker's closing buttons in order, and whether they come after its help text
   * (the way out last, as in the window's other dialogs).
   */
  pickerActions(): Promise<{ buttons: string[]; afterHelp: boolean }> {
    return this.filePicker.evaluate((box) => {
      const row = box.querySelector('.picker-actions');
      const help = box.querySelector(':scope > p.muted');
      return {
        buttons: row ? Array.from(row.querySelectorAll('button')).map((b) => b.innerText.trim()) : [],
        afterHelp:
          !!row && !!help && (help.compareDocumentPosition(row) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
      };
    });
  }
  /** A task's entry in the start list: its card and what shows under it (a failed start). */
  taskItem(id: string): Locator {
    return this.root.locator('li', {
      has: this.page.locator(`[data-testid="library-task"][data-task="${id}"]`),
    });
  }
  /** Why a start from a task's card failed, under the card. */
  startError(id: string): Locator {
    return this.taskItem(id).getByTestId('start-error');
  }
  /** The cards of the cases. */
  get caseCards(): Locator {
    return this.page.getByTestId('library-case');
  }
  /**
   * The case cards drawn apart from the others (a border of another colour: what reads as
   * "selected"), by id. A card the pointer was left over kept the accent border of a hovered
   * button beside another case's open episode.
   */
  markedCases(): Promise<string[]> {
    return this.caseCards.evaluateAll((cards) => {
      const colour = (el: Element) => getComputedStyle(el).borderTopColor;
      const counts = new Map<string, number>();
      for (const c of cards) counts.set(colour(c), (counts.get(colour(c)) ?? 0) + 1);
      const usual = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
      return cards.filter((c) => colour(c) !== usual).map((c) => c.getAttribute('data-case') ?? '?');
    });
  }
  async openCase(id: string): Promise<void> {
    await this.root.locator(`[data-testid="library-case"][data-case="${id}"]`).click();
  }
  /** Waits until the start list shows its tasks. */
  async waitForTasks(ms = 30_000): Promise<void> {
    await this.root.getByTestId('library-task').first().waitFor({ timeout: ms });
  }
  /** Episode ids the list shows. */
  episodes(): Promise<string[]> {
    return this.root
      .locator('[data-testid="library-episode"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-episode') ?? ''));
  }
  /** Waits until `branch` is the one open (its node marked current). */
  async waitForCurrent(branch: string, ms = 30_000): Promise<void> {
    await this.root
      .locator(`[data-testid="branch-node"].current[data-branch="${branch}"]`)
      .waitFor({ timeout: ms });
  }
  /** The case drawer's line for one run of the open case: its outcome in words; a click opens it. */
  caseRun(variant: 'broken' | 'fixed', caseId?: string): Locator {
    const walkthrough = caseId === undefined ? this.walkthrough : this.walkthroughOf(caseId);
    return walkthrough.locator(`[data-testid="case-run"][data-variant="${variant}"]`);
  }
  /**
   * Records, from now on, every moment the bar says the open branch ended while the case's
   * `variant` run line still says it goes on (`live, at step 3`, `running…`): each DOM change is
   * looked at as the window commits it. `read()` gives those moments as `bar | run line`.
   */
  async watchRunLineAgainstBar(variant: 'broken' | 'fixed'): Promise<{ read(): Promise<string[]> }> {
    await this.page.evaluate((v) => {
      const seen: string[] = [];
      const note = () => {
        const bar = document.querySelector('[data-testid="stepper-bar"]')?.getAttribute('data-state');
        const line = document.querySelector<HTMLElement>(`[data-testid="case-run"][data-variant="${v}"]`);
        const text = line?.innerText.replace(/\s+/g, ' ').trim() ?? '';
        const at = `${bar} | ${text}`;
        if (bar === 'ended' && /\b(live|running)\b/.test(text) && seen.at(-1) !== at) seen.push(at);
      };
      new MutationObserver(note).observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true,
      });
      (window as unknown as { __runLineVsBar: string[] }).__runLineVsBar = seen;
    }, variant);
    return {
      read: () =>
        this.page.evaluate(() => (window as unknown as { __runLineVsBar: string[] }).__runLineVsBar),
    };
  }
  /** The walkthrough's "▶ Run it": runs the case's episode from where it waits. */
  get caseRunIt(): Locator {
    return this.walkthrough.getByTestId('case-run-continue');
  }
  /**
   * What the case drawer says the window shows: its badge (`broken version open`), or its note
   * that another episode is on screen (`data-testid="case-away"`).
   */
  get caseShown(): Locator {
    return this.walkthrough.locator('[data-testid="case-variant"], [data-testid="case-away"]');
  }
  /** The open case's walkthrough (the drawer below the library). */
  get walkthrough(): Locator {
    return this.page.getByTestId('case-walkthrough');
  }
  /** Clicks the walkthrough's "Compare broken vs fixed" once both runs let it act (no reason left on it). */
  async compareCaseRuns(): Promise<void> {
    const compare = this.walkthrough.getByTestId('case-compare');
    await until(
      () => compare.getAttribute('data-why'),
      (why) => why === null,
      30_000,
      'Compare enabled with both runs',
    );
    await compare.click();
  }
  /** The walkthrough while it is the one of case `caseId`. */
  walkthroughOf(caseId: string): Locator {
    return this.page.locator(`[data-testid="case-walkthrough"][data-case="${caseId}"]`);
  }
  /** How many steps a branch's node says it has (`1 step`). */
  branchSteps(branch: string): Locator {
    return this.branchNode(branch).getByTestId('branch-steps');
  }
  /** The return a branch's node says (`return 27.43 (γ=0.99)`). */
  branchReturn(branch: string): Locator {
    return this.branchNode(branch).getByTestId('branch-return');
  }
  /** The line at the head of an episode's entry: its main branch's return and its QA flags. */
  episodeHead(episode: string): Locator {
    return this.root.locator(`[data-testid="library-episode"][data-episode="${episode}"] .lib-episode-head`);
  }
  /** What an episode's heading says tells it from its task's other episodes (`· started 16:08`). */
  episodeApart(episode: string): Locator {
    return this.episodeHead(episode).getByTestId('episode-apart');
  }
  /** Every name the library's trees give a branch (candidates), by branch id. */
  branchNames(): Promise<Record<string, string>> {
    return this.root
      .locator('[data-testid="branch-node"]:has([data-testid="branch-name"])')
      .evaluateAll((els) =>
        Object.fromEntries(
          els.map((e) => [
            e.getAttribute('data-branch') ?? '',
            (e.querySelector('[data-testid="branch-name"]') as HTMLElement).innerText.trim(),
          ]),
        ),
      );
  }
  /** Opens a branch from the library's trees (a click on its node). */
  async openBranch(branch: string): Promise<void> {
    await this.branchNode(branch).click();
  }
  /** Branch ids shown in the library's trees. */
  branches(): Promise<string[]> {
    return this.root
      .locator('[data-testid="branch-node"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-branch') ?? ''));
  }
  async search(text: string): Promise<void> {
    await this.searchField.fill(text);
  }
  /** The status the list gives a branch (`live`, `interrupted`, `succeeded`, …). */
  branchStatus(branch: string): Promise<string | null> {
    return this.root
      .locator(`[data-testid="branch-node"][data-branch="${branch}"]`)
      .getAttribute('data-status');
  }
  /** The branches the Running list shows live, in its order. */
  runningBranches(): Promise<string[]> {
    return this.root
      .locator('[data-testid="running-item"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-branch') ?? ''));
  }
  /** A live branch's item in the Running list. */
  runningItem(branch: string): Locator {
    return this.root.locator(`[data-testid="running-item"][data-branch="${branch}"]`);
  }
  /**
   * Opens a live branch from the Running list with a click on its clock line (not its name:
   * the whole entry opens its episode, as the Episodes tree's node does).
   */
  async openRunning(branch: string): Promise<void> {
    await this.runningItem(branch).getByTestId('running-times').click();
  }
  /** A Running entry's own button (its name): the keyboard's way to open it. */
  runningOpen(branch: string): Locator {
    return this.runningItem(branch).getByTestId('running-open');
  }
  /** What a live branch's item says of its clock: `{age, idle}` as shown (`3 min`, `42 s`). */
  async runningTimes(branch: string): Promise<{ age: string; idle: string }> {
    const item = this.runningItem(branch);
    const [age, idle] = await Promise.all([
      item.getByTestId('running-age').innerText(),
      item.getByTestId('running-idle').innerText(),
    ]);
    return { age, idle };
  }
}

/** One timeline row as read from the page. */
export interface RowText {
  readonly step: number;
  readonly status: string;
  readonly text: string;
}

/** The timeline. */
export class TimelinePanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'timeline');
  }
  /** The rows in the DOM (the virtualizer renders only those near the viewport). */
  rows(): Promise<RowText[]> {
    return this.root.locator('[data-testid="timeline-row"]').evaluateAll((els) =>
      els
        .map((e) => ({
          step: Number(e.getAttribute('data-step')),
          status: e.getAttribute('data-status') ?? '',
          text: (e as HTMLElement).innerText.replace(/\s+/g, ' ').trim(),
        }))
        .sort((a, b) => a.step - b.step),
    );
  }
  row(step: number): Locator {
    return this.root.locator(`[data-testid="timeline-row"][data-step="${step}"]`);
  }
  /** Every row in the DOM (the virtualizer renders only those near the viewport). */
  get rowItems(): Locator {
    return this.page.locator('[data-testid="timeline-row"]');
  }
  /** Step `step`'s row while it is the selected one. */
  selectedRow(step: number): Locator {
    return this.page.locator(`[data-testid="timeline-row"][data-step="${step}"][aria-selected="true"]`);
  }
  /** The placeholder rows of steps still arriving. */
  get arrivingRows(): Locator {
    return this.page.getByTestId('timeline-row-arriving');
  }
  /** The scrolling list of rows. */
  get scroller(): Locator {
    return this.page.getByTestId('timeline-scroll');
  }
  /** Waits until no step is still arriving (the list says so). */
  async waitForArrived(ms?: number): Promise<void> {
    await this.page.locator('[data-testid="timeline-scroll"][data-arriving="0"]').waitFor({ timeout: ms });
  }
  /** "Save as case…" in the header (a name, then the branch joins the case library). */
  get saveCaseButton(): Locator {
    return this.page.getByTestId('btn-save-case');
  }
  /** Where Save as case… says why it cannot act while pointed at or focused: a line at the top of the timeline. */
  get saveCaseWhy(): Locator {
    return this.page.locator('#save-case-why');
  }
  /** The save dialog's case name. */
  get saveCaseName(): Locator {
    return this.page.getByTestId('save-case-name');
  }
  /** The save dialog's Save. */
  get saveCaseSave(): Locator {
    return this.page.getByTestId('save-case-dialog').getByRole('button', { name: 'Save' });
  }
  /** The save dialog's line under the name: what a name takes, or why the last try was refused. */
  get saveCaseRefused(): Locator {
    return this.page.getByTestId('save-case-refused');
  }
  /** The save dialog's Replace, offered once a name was refused as taken: saves over that case. */
  get saveCaseReplace(): Locator {
    return this.page.getByTestId('save-case-replace');
  }
  /** "Share…" in the header: the branch as one HTML file, downloaded. */
  get shareButton(): Locator {
    return this.page.getByTestId('btn-share');
  }
  /** What saving or sharing answered (`Saved as case …`, `… KiB; your browser downloads a copy): it opens offline …`). */
  get teachingNote(): Locator {
    return this.page
      .locator('[data-testid="notice"]:is([data-kind="share"], [data-kind="save-case"])')
      .last();
  }
  /** How many steps the branch has, as the header says (`10000 steps`). */
  get stepCount(): Locator {
    return this.page.getByTestId('timeline-count');
  }
  /** The "go to step" field. */
  get gotoField(): Locator {
    return this.page.getByTestId('timeline-goto');
  }
  /** Why "go to step" could not go there. */
  get gotoMessage(): Locator {
    return this.page.getByTestId('timeline-goto-message');
  }
  /** The filter's text field. */
  get filterText(): Locator {
    return this.page.getByTestId('timeline-filter-text');
  }
  /** The filter's kind (all, errors, …). */
  get filterKind(): Locator {
    return this.page.getByTestId('timeline-filter-kind');
  }
  /** The legend of the person marks the rows carry (`EDIT edited call`), above the rows. */
  get markLegend(): Locator {
    return this.root.getByTestId('mark-legend');
  }
  /** The reward chart above the rows. */
  get rewardChart(): Locator {
    return this.page.getByTestId('reward-chart');
  }
  /** The height (px) of the chart's plot, its bars' room (its legend below not counted); 0 when not drawn. */
  async rewardPlotHeight(): Promise<number> {
    return (await this.rewardChart.locator('.chart-plot').boundingBox())?.height ?? 0;
  }
  /** The colour of each reward component's swatch in the chart's legend (computed, `rgb(…)`). */
  legendColours(): Promise<Record<string, string>> {
    return componentColours(this.page.locator('[data-testid="reward-legend"]'), 'swatch');
  }
  /** Each reward component's words in the chart's legend, by its key (`tool_error` → `tool error penalty`). */
  legendLabels(): Promise<Record<string, string>> {
    return componentTexts(this.page.locator('[data-testid="reward-legend"]'));
  }
  /** The reward column of step `step`'s row (`0.10`; the last row's `0.10 +1.00` with the verifier's). */
  rewardAt(step: number): Locator {
    return this.row(step).getByTestId('row-reward');
  }
  /** The verifier's part of the last row's reward (`+1.00`), once the branch ended. */
  get verifierReward(): Locator {
    return this.root.getByTestId('row-verifier-reward');
  }
  /** The time column of step `step`'s row (`3.2 ms`, `—` when not known, empty without a call). */
  durationAt(step: number): Locator {
    return this.row(step).getByTestId('timeline-duration');
  }
  /** The steps whose rows carry a QA flag of `rule` (as shown), as strings. */
  flaggedSteps(rule: string): Promise<(string | null)[]> {
    return this.root
      .locator(`[data-flag="${rule}"]`)
      .evaluateAll((els) => els.map((e) => e.closest('[data-step]')?.getAttribute('data-step') ?? null));
  }
  /** Waits until a QA flag of `rule` shows (bounded), then the steps it shows on, as {@link flaggedSteps}. */
  waitForFlaggedSteps(rule: string, ms = 30_000): Promise<(string | null)[]> {
    return until(
      () => this.flaggedSteps(rule),
      (steps) => steps.length > 0,
      ms,
      `${rule} flag in the timeline`,
    );
  }
  /**
   * The row of step `step` as read from the page. By step number, never by index: the
   * timeline's first row is step 0 (the sandbox's setup), not the agent's first step.
   */
  async rowAt(step: number): Promise<RowText> {
    const row = (await this.rows()).find((r) => r.step === step);
    if (!row) throw new Error(`the timeline shows no row for step ${step}`);
    return row;
  }
  async lastStep(): Promise<number> {
    const rows = await this.rows();
    return rows.length ? rows[rows.length - 1].step : 0;
  }
  /** Waits until the timeline shows step `step` (bounded). */
  async waitForStep(step: number, ms = 60_000): Promise<void> {
    await this.row(step).waitFor({ timeout: ms });
  }
  /** The duration step `step`'s row shows (its TIME column; hidden in a narrow timeline). */
  rowDuration(step: number): Locator {
    return this.row(step).locator('.tl-dur');
  }
  /** The step number of step `step`'s row (its # column). */
  stepCell(step: number): Locator {
    return this.row(step).locator('.tl-step');
  }
  /** The TOOL column of step `step`'s row. */
  toolCell(step: number): Locator {
    return this.row(step).locator('.tl-tool');
  }
  /** The ARGUMENTS column of step `step`'s row. */
  argsCell(step: number): Locator {
    return this.row(step).locator('.tl-args');
  }
  /** The # column's heading. */
  get stepHeading(): Locator {
    return this.root.locator('.tl-head .tl-step');
  }
  /** The column headings (# TOOL ARGUMENTS MARKS STATUS), hidden while no episode is open. */
  get columnHeadings(): Locator {
    return this.root.locator('.tl-head');
  }
  /** What the timeline says with no episode open: what stepbox does and the ways in. */
  get welcome(): Locator {
    return this.root.getByTestId('welcome');
  }
  /** The tools of step `step`'s row that the task does not offer (each marked, with a title saying so). */
  notOffered(step: number): Locator {
    return this.row(step).getByTestId('row-tool-not-offered');
  }
  /** The QA flags above the timeline, one entry per flag (each jumps to its step). */
  get flagEntries(): Locator {
    return this.root.getByTestId('flag-jump');
  }
  /** The scrolling list of those flags (under its heading). */
  get flagListBody(): Locator {
    return this.root.locator('[data-testid="flag-list"] ul');
  }
  /** The flags' one-line summary (`▸ ⚑ 3 QA flags · …`), which folds and unfolds their list. */
  get flagSummary(): Locator {
    return this.root.getByTestId('flag-list-toggle');
  }
  /** Unfolds the QA flag list if it is folded (a short window folds it): one click. */
  async showFlags(): Promise<void> {
    await this.flagSummary.waitFor({ timeout: 60_000 });
    if ((await this.flagSummary.getAttribute('aria-expanded')) === 'false') await this.flagSummary.click();
    await this.flagEntries.first().waitFor();
  }
  /**
   * How many whole rows a person sees room for: the height of the list's window that is on
   * screen (inside the window and every ancestor that clips it) over a row's. Its own height
   * alone was measured while the QA flags were folded, and two rows showed once they unfolded.
   */
  rowsRoom(): Promise<number> {
    return this.scroller.evaluate((el) => {
      const row = el.querySelector('[data-testid="timeline-row"]');
      if (!row) return 0;
      const box = el.getBoundingClientRect();
      let top = box.top + el.clientTop;
      let bottom = Math.min(top + el.clientHeight, innerHeight);
      top = Math.max(top, 0);
      for (let p = el.parentElement; p; p = p.parentElement) {
        const style = getComputedStyle(p);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const b = p.getBoundingClientRect();
        top = Math.max(top, b.top + p.clientTop);
        bottom = Math.min(bottom, b.top + p.clientTop + p.clientHeight);
      }
      return Math.max(0, Math.floor((bottom - top + 0.5) / row.getBoundingClientRect().height));
    });
  }
  /**
   * The steps of the rows the list's window shows only a strip of (cut by its top or bottom
   * edge); empty when each row drawn is whole in it or wholly scrolled out. Row 0 opened cut in
   * half under the column header (the list scrolled a fraction of a row to show its last).
   */
  cutRows(): Promise<string[]> {
    return this.scroller.evaluate((el) => {
      const top = el.getBoundingClientRect().top + el.clientTop;
      const bottom = top + el.clientHeight;
      return Array.from(el.querySelectorAll('[data-testid="timeline-row"]'))
        .filter((row) => {
          const r = row.getBoundingClientRect();
          return (
            (r.top < top - 0.5 && r.bottom > top + 0.5) || (r.top < bottom - 0.5 && r.bottom > bottom + 0.5)
          );
        })
        .map((row) => `step ${row.getAttribute('data-step') ?? '?'}`);
    });
  }
  /**
   * How many characters of its own font step `step`'s arguments cell holds (its width over a
   * digit's): a flag beside them once left "The …", room for one.
   */
  argsRoom(step: number): Promise<number> {
    return this.row(step)
      .locator('.tl-args')
      .evaluate((el) => {
        const probe = Object.assign(document.createElement('span'), { textContent: '0'.repeat(10) });
        el.append(probe);
        const digit = probe.getBoundingClientRect().width / 10;
        probe.remove();
        return Math.floor((el.getBoundingClientRect().width + 0.5) / digit);
      });
  }
  /** The status word of step `step`'s row (`ok`, `waiting`, …). */
  rowStatus(step: number): Locator {
    return this.row(step).getByTestId('row-status');
  }
  async toggleBreakpoint(step: number): Promise<void> {
    await this.row(step).locator('.tl-bp').click();
  }
  async select(step: number): Promise<void> {
    await this.row(step).click();
  }
  /** Scrolls the virtualized list so `step` is rendered. */
  async scrollTo(step: number): Promise<void> {
    await this.scroller.evaluate((el, s) => {
      el.scrollTop = (s - 1) * 22;
    }, step);
  }
}

/** The terminal. */
export class TerminalPanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'terminal');
  }
  /** The live terminal's rows, read through xterm's buffer. */
  lines(which: 'live' | 'history' = 'live'): Promise<string[]> {
    return this.page.evaluate((w) => {
      const term = w === 'live' ? window.__stepboxTerminal : window.__stepboxHistoryTerminal;
      if (!term) return [];
      const buf = term.buffer.active;
      const out: string[] = [];
      for (let i = 0; i < buf.length; i++) out.push(buf.getLine(i)?.translateToString(true) ?? '');
      return out;
    }, which);
  }
  /** The terminal's whole buffer as text. */
  async screen(which: 'live' | 'history' = 'live'): Promise<string> {
    return (await this.lines(which)).join('\n');
  }
  size(): Promise<{ cols: number; rows: number }> {
    return this.page.evaluate(() => ({
      cols: window.__stepboxTerminal?.cols ?? 0,
      rows: window.__stepboxTerminal?.rows ?? 0,
    }));
  }
  mode(): Promise<string | null> {
    return this.root.getByTestId('terminal-mode').getAttribute('data-mode');
  }
  /**
   * The step whose recorded output the history terminal holds, and whether it is marked as not
   * the viewed one yet (dimmed, `aria-busy`) while the viewed step's output waits for an idle moment.
   */
  recorded(): Promise<{ step: number | null; stale: boolean }> {
    return this.page.evaluate(() => {
      const box = document.querySelector<HTMLElement>('[data-testid="terminal-history"]');
      const step = box?.dataset.step;
      return {
        step: step === undefined ? null : Number(step),
        stale: box?.getAttribute('aria-busy') === 'true',
      };
    });
  }
  /**
   * Presses `key` on the window and reports the history terminal as it is right after the
   * press's render, before the window is idle again (the recorded output is written then): in
   * the same task as the press, so no idle callback can run in between.
   */
  recordedRightAfter(key: string): Promise<{ step: number | null; stale: boolean; opacity: string }> {
    return this.page.evaluate(async (k) => {
      window.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
      // React renders a key's update in a microtask after the event: two turns see its commit.
      await Promise.resolve();
      await Promise.resolve();
      const box = document.querySelector<HTMLElement>('[data-testid="terminal-history"]');
      const step = box?.dataset.step;
      return {
        step: step === undefined ? null : Number(step),
        stale: box?.getAttribute('aria-busy') === 'true',
        opacity: box ? getComputedStyle(box).opacity : '',
      };
    }, key);
  }
  /** Waits until the header says the live shell is open (a sandbox is there to type in). */
  async waitForOpen(ms = 60_000): Promise<void> {
    await this.root.getByTestId('terminal-mode').filter({ hasText: 'open' }).waitFor({ timeout: ms });
  }
  /** Waits until the live shell's prompt (`…$ `) is on the screen. */
  async waitForPrompt(ms = 30_000): Promise<void> {
    await until(
      () => this.lines(),
      (lines) => lines.some((l) => /\$\s*$/.test(l)),
      ms,
      'the shell prompt in the live terminal',
    );
  }
  /**
   * Where the pane's status (no sandbox, opening, loading) sits: its distance in px from the
   * left and top edges of the terminal's body, and its text.
   */
  status(): Promise<{ left: number; top: number; text: string } | null> {
    return this.root.evaluate((panel) => {
      const state = panel.querySelector<HTMLElement>('.state');
      const body = panel.querySelector<HTMLElement>('.panel-body');
      if (!state || !body) return null;
      const s = state.getBoundingClientRect();
      const b = body.getBoundingClientRect();
      return { left: s.left - b.left, top: s.top - b.top, text: state.innerText };
    });
  }
  async focus(): Promise<void> {
    await this.root.getByTestId('terminal-live').click();
  }
  /**
   * Types a command line and waits until the command has run: `expect` shows in the output
   * after the typed line (never in the echo of the line itself, which holds the same words) and
   * the prompt is back. The prompt comes after the shell's history hook has reported the
   * command, so by then the engine has recorded it: a step started next comes after it, as for
   * a person who waits for the prompt. Returns the buffer as text.
   */
  async run(command: string, expect: RegExp | string, ms = 20_000): Promise<string> {
    await this.focus();
    await this.page.keyboard.type(command);
    await this.page.keyboard.press('Enter');
    const found = await until(
      () => this.screenAndUnwrapped(),
      ({ flat }) => {
        // What the shell printed after the typed line (a `clear` may have wiped the line itself).
        const at = flat.lastIndexOf(command);
        const after = at < 0 ? flat : flat.slice(at + command.length);
        const printed = typeof expect === 'string' ? after.includes(expect) : expect.test(after);
        const last = after.trimEnd().split('\n').pop() ?? '';
        // The prompt (`bash-5.2$`, `user@host:/workspace$`, `#` as root) stands alone on the last line.
        return printed && /[$#]$/.test(last);
      },
      ms,
      `terminal output ${String(expect)} after "${command}", then the prompt`,
    );
    return found.screen;
  }
  /**
   * The live buffer as {@link screen} reads it, and with lines xterm wrapped joined again (a
   * long typed line reads whole), both from one read: read in two calls, output still arriving
   * (a flood) made the second hold the expected end while the first, returned, did not.
   */
  private screenAndUnwrapped(): Promise<{ screen: string; flat: string }> {
    return this.page.evaluate(() => {
      const term = window.__stepboxTerminal;
      if (!term) return { screen: '', flat: '' };
      const buf = term.buffer.active;
      const rows: string[] = [];
      let flat = '';
      for (let i = 0; i < buf.length; i++) {
        const line = buf.getLine(i);
        const text = line?.translateToString(true) ?? '';
        rows.push(text);
        if (!line) continue;
        flat += (i > 0 && !line.isWrapped ? '\n' : '') + text;
      }
      return { screen: rows.join('\n'), flat };
    });
  }
}

/** The tool-call inspector. */
export class InspectorPanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'tool-inspector');
  }
  /** The note above the tabs naming the step's texts sent cut (head and tail) and the command printing them whole. */
  get cutNotice(): Locator {
    return this.root.getByTestId('inspector-cut-notice');
  }
  /** The Call tab of a step held as its episode ended: what was decided, and that it never ran. */
  get neverRan(): Locator {
    return this.root.getByTestId('inspector-never-ran');
  }
  /** What the open tab says when it has nothing of the step's to show (no call, no output). */
  get tabEmpty(): Locator {
    return this.root.getByTestId('inspector-step').locator(':scope > [data-state="empty"]');
  }
  /** The step's final answer, above the tabs (the agent answered instead of calling a tool). */
  get finalAnswer(): Locator {
    return this.root.getByTestId('inspector-final');
  }
  /** The step the inspector shows, once loaded. */
  async step(): Promise<number | null> {
    const el = this.root.getByTestId('inspector-step');
    if ((await el.count()) === 0) return null;
    return Number(await el.getAttribute('data-step'));
  }
  async waitForStep(step: number, ms = 20_000): Promise<void> {
    await this.root.locator(`[data-testid="inspector-step"][data-step="${step}"]`).waitFor({ timeout: ms });
  }
  /** Waits until the output tab's stdout shows `text` (open the tab first). */
  async waitForStdout(text: string, ms = 20_000): Promise<void> {
    await this.root.getByTestId('inspector-stdout').filter({ hasText: text }).waitFor({ timeout: ms });
  }
  /** The Output tab's stdout boxes, one a call (an agent's exec output without its tool's header). */
  get stdout(): Locator {
    return this.root.getByTestId('inspector-stdout');
  }
  /** The Output tab's line of what an agent's exec tool said above its output (exit, wall time). */
  get execFacts(): Locator {
    return this.root.getByTestId('inspector-exec-facts');
  }
  /** The recorded text of such an output, header and all, behind its "as recorded" summary. */
  get rawStdout(): Locator {
    return this.root.getByTestId('inspector-stdout-raw');
  }
  /** Opens the recorded text of the `i`-th such output; returns its text. */
  async openRawStdout(i = 0): Promise<string> {
    const raw = this.rawStdout.nth(i);
    await raw.locator('summary').click();
    const pre = raw.locator('pre');
    await pre.waitFor({ state: 'visible' });
    return pre.innerText();
  }
  /** The Files tab's list of changed files, once shown (open the tab first). */
  async filesText(ms = 30_000): Promise<string> {
    const files = this.root.getByTestId('inspector-files');
    await files.waitFor({ timeout: ms });
    return files.innerText();
  }
  /** The duration the Call tab's facts say (of the real result when it differs from the shown one). */
  get duration(): Locator {
    return this.root.getByTestId('inspector-facts').locator('dt:text-is("duration") + dd');
  }
  /** The size the Call tab's facts say (`30 B`). */
  get bytes(): Locator {
    return this.root.getByTestId('inspector-facts').locator('dt:text-is("bytes") + dd');
  }
  /** What a person changed before the step ran, beside what the agent had decided. */
  get edit(): Locator {
    return this.root.getByTestId('inspector-edit');
  }
  /** The note that a person gave the step's result instead of running it. */
  get replaced(): Locator {
    return this.root.getByTestId('inspector-replaced');
  }
  /**
   * The note above every tab that a person gave a call's result (in place of the tool's, or
   * instead of running it), with what the tool really returned.
   */
  get override(): Locator {
    return this.root.getByTestId('inspector-override');
  }
  /** The Call tab's facts of the result: outcome in words, and the exit code field. */
  get outcome(): Locator {
    return this.root.getByTestId('inspector-outcome');
  }
  get exitCode(): Locator {
    return this.root.getByTestId('inspector-exit');
  }
  /** The line above a raw result JSON whose `"ok": true` sits beside a failing exit code. */
  get rawNote(): Locator {
    return this.root.getByTestId('inspector-raw-note');
  }
  /** The Call tab's line "real result … / the agent saw …" of an overridden (or fallback) result. */
  get realVsShown(): Locator {
    return this.root.getByTestId('inspector-real-vs-shown');
  }
  /** Step 0's view of the task: its name, what the agent was told, its limits. */
  get task(): Locator {
    return this.root.getByTestId('task-view');
  }
  /** Where the task came from, as step 0 shows it (from the task's folder, never the host's whole path). */
  get taskPath(): Locator {
    return this.root.getByTestId('task-path');
  }
  /** The colour of each reward component's bar under the step (computed fill, `rgb(…)`). */
  rewardColours(): Promise<Record<string, string>> {
    return componentColours(this.root.locator('[data-testid="inspector-reward-bar"]'), 'fill');
  }
  /** Each reward component's words beside its bar under the step, by its key. */
  rewardLabels(): Promise<Record<string, string>> {
    return componentTexts(this.root.locator('[data-testid="inspector-reward-label"]'));
  }
  /**
   * Each reward component's bar under the step: its sign, and where it starts and ends on screen
   * (a penalty reaches left of the zero line, a gain right of it).
   */
  rewardBars(): Promise<{ component: string; sign: string; left: number; right: number }[]> {
    return this.root.locator('[data-testid="inspector-reward-bar"]').evaluateAll((els) =>
      els.map((e) => {
        const box = e.getBoundingClientRect();
        return {
          component: e.getAttribute('data-component') ?? '',
          sign: e.getAttribute('data-sign') ?? '',
          left: box.left,
          right: box.right,
        };
      }),
    );
  }
  /** The goal as step 0 shows it (folded to a few lines until "more"). */
  get taskGoal(): Locator {
    return this.root.getByTestId('task-goal');
  }
  /** What of the episode's world was left out when it started (the header's world_warnings), one line each. */
  get taskWarnings(): Locator {
    return this.root.getByTestId('task-warnings').getByTestId('world-warning');
  }
  /** "more" / "less" under a long goal. */
  get taskMore(): Locator {
    return this.root.getByTestId('task-more');
  }
  /** The QA flags the inspector shows for its step. */
  /** The Call tab's tool names, one a call (the call's id only in its tooltip). */
  get callNames(): Locator {
    return this.root.getByTestId('inspector-call-name');
  }
  get flags(): Locator {
    return this.root.getByTestId('inspector-flag');
  }
  async tab(name: 'call' | 'output' | 'files' | 'memory' | 'request' | 'agent'): Promise<void> {
    await this.root.locator(`[data-tab="${name}"]`).click();
  }
  /** The tab selected now (`call`, `output`, …). */
  selectedTab(): Promise<string | null> {
    return this.root.locator('[data-tab][aria-selected="true"]').getAttribute('data-tab');
  }
  /**
   * The text of the inspector's views ON SCREEN, by name (`arguments.json`, `result.json`,
   * `diff-after`, …): the light JSON views and the Monaco models on screen (a JSON view
   * opened in the editor, the Files diff), not every model ever made.
   */
  models(): Promise<Record<string, string>> {
    return this.page.evaluate(() => {
      const monaco = window.__stepboxMonaco;
      const out: Record<string, string> = {};
      // The JSON of a light view: a text value drawn as its lines keeps its JSON in `data-json`.
      const json = (n: Node): string =>
        n instanceof Element
          ? (n.getAttribute('data-json') ?? Array.from(n.childNodes).map(json).join(''))
          : (n.textContent ?? '');
      for (const el of Array.from(
        document.querySelectorAll('[data-testid="tool-inspector"] [data-json-view]'),
      )) {
        const pre = el.querySelector('pre');
        out[el.getAttribute('data-json-view') ?? ''] = pre ? json(pre) : '';
      }
      for (const editor of monaco?.editor.getEditors() ?? []) {
        const m = editor.getModel();
        if (!m || m.uri.scheme !== 'stepbox') continue;
        // stepbox://inspector/<name>?<branch/step/path>
        const name = m.uri.path.replace(/^\//, '');
        if (m.uri.authority === 'inspector') out[name] = m.getValue();
      }
      return out;
    });
  }
  /** A light JSON view's text as a person reads it on screen (`result.json`, …): its lines as drawn. */
  shownText(name: string): Promise<string> {
    return this.root.locator(`[data-json-view="${name}"] pre`).innerText();
  }
  /** What an on-screen model shows (its URI query: branch/step, and the file for a diff). */
  modelScopes(): Promise<Record<string, string>> {
    return this.page.evaluate(() => {
      const out: Record<string, string> = {};
      for (const editor of window.__stepboxMonaco?.editor.getEditors() ?? []) {
        const m = editor.getModel();
        if (m && m.uri.authority === 'inspector') out[m.uri.path.replace(/^\//, '')] = m.uri.query;
      }
      return out;
    });
  }
  /** Waits until a Monaco model holds text matching `accept`. */
  model(name: string, accept: (v: string) => boolean, ms = 20_000): Promise<string> {
    return until(async () => (await this.models())[name] ?? '', accept, ms, `Monaco model ${name}`);
  }
  /** The last line number the Files tab's editor (diff or whole file) draws: the lines a person sees. */
  async lastLineNumber(): Promise<number> {
    const numbers = await this.root.locator('.monaco-box.diff .line-numbers').allTextContents();
    return Math.max(0, ...numbers.map((n) => Number(n.trim())).filter((n) => Number.isFinite(n)));
  }
}

/** The injection panel. */
export class InjectPanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'inject-panel');
  }
  /** The tab of one of the panel's sections (`decide`, `message`, `override`). */
  tab(section: 'decide' | 'message' | 'override'): Locator {
    return this.root.locator(`[data-testid="inject-tab"][data-section="${section}"]`);
  }
  /** The section selected now (`decide`, `message`, `override`). */
  selectedTab(): Promise<string | null> {
    return this.root.locator('[data-testid="inject-tab"][aria-selected="true"]').getAttribute('data-section');
  }
  /** The message field of the inject section. */
  get messageField(): Locator {
    return this.root.getByTestId('inject-text');
  }
  /** Why "Inject at this step" cannot send, in a line under it (shown once a message is typed). */
  get sendWhy(): Locator {
    return this.root.getByTestId('why-line');
  }
  /** The sentence an ended branch shows instead of the fields (with its fork button). */
  get ended(): Locator {
    return this.root.getByTestId('inject-ended');
  }
  /** An ended branch's fork button (`Fork at step 2`). */
  get forkButton(): Locator {
    return this.root.getByTestId('inject-fork');
  }
  /** The answer to the panel's last action (an injected message, an override). */
  get notice(): Locator {
    return this.root.getByTestId('inject-notice');
  }
  /** The override section's button that copies the result it replaces into the field. */
  get copyResult(): Locator {
    return this.root.getByTestId('override-copy');
  }
  /** What the override section says the agent is about to see (the result an override replaces). */
  get pendingResult(): Locator {
    return this.root.getByTestId('override-pending');
  }
  /** Gives the pending tool call the result `text` (its tab first) and waits for the answer. */
  async override(text: string): Promise<void> {
    await this.tab('override').click();
    await this.root.getByTestId('override-text').fill(text);
    await this.root.getByTestId('override-send').click();
    await this.notice.filter({ hasText: 'The agent reads yours' }).waitFor({ timeout: 10_000 });
  }
  async inject(text: string, role: 'user' | 'system' = 'user'): Promise<void> {
    await this.tab('message').click();
    await this.root.getByTestId('inject-role').selectOption(role);
    await this.root.getByTestId('inject-text').fill(text);
    await this.root.getByTestId('inject-send').click();
    await this.root.locator('.notice').waitFor({ timeout: 10_000 });
  }
}

/** The replay controls. */
export class ReplayPanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'replay-controls');
  }
  async rollback(): Promise<void> {
    await this.root.getByTestId('rollback').click();
    await this.root
      .getByTestId('replay-notice')
      .filter({ hasText: 'rolled back' })
      .waitFor({ timeout: 60_000 });
  }
  async fork(): Promise<void> {
    await this.root.getByTestId('fork').click();
    await this.root.getByTestId('replay-notice').filter({ hasText: 'forked' }).waitFor({ timeout: 60_000 });
  }
  /** Moves the slider to `step` as a drag does: the range's value set and an input event on it. */
  async dragSliderTo(step: number): Promise<void> {
    await this.page.evaluate((to) => {
      const input = document.querySelector<HTMLInputElement>('[data-testid="scrubber"]');
      const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set;
      if (!input || !set) throw new Error('no scrubber');
      set.call(input, String(to));
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }, step);
  }
  /** The question asked before a sandbox is built from a recorded task wider than the defaults. */
  get consentAsk(): Locator {
    return this.root.getByTestId('consent-ask');
  }
  /** Answers the consent question. */
  async answerConsent(allow: boolean): Promise<void> {
    await this.root.getByTestId(allow ? 'consent-allow' : 'consent-deny').click();
  }
  /**
   * The panel's buttons a person can see (not those inside a closed section), each with its
   * text, for checks that every action is in reach.
   */
  visibleButtons(): Locator {
    return this.root.locator('button:visible');
  }
  /** Presses "Re-execute replay" and waits for its report. */
  async reexecute(ms = 120_000): Promise<Locator> {
    await this.root.getByTestId('replay-verify').click();
    const report = this.root.getByTestId('replay-report');
    await report.waitFor({ timeout: ms });
    return report;
  }
  /** A button of the panel as a person reads it: its label, and why it waits (null when it does not). */
  async buttonWords(testId: string): Promise<{ label: string; why: string | null }> {
    const b = this.root.getByTestId(testId);
    return { label: (await b.innerText()).trim(), why: await b.getAttribute('data-why') };
  }
  /** Presses Replay's Reopen ("Reopen live at step K"; no wait: a question may come first). */
  async pressReopen(): Promise<void> {
    await this.root.getByTestId('reopen').click();
  }
  /** The panel's answer to its last button ("rolled back to step 1: now on …"), while it holds. */
  get notice(): Locator {
    return this.root.getByTestId('replay-notice');
  }
  /** Waits for the panel's notice to say `text`. */
  async waitForNotice(text: string, ms = 60_000): Promise<void> {
    await this.root.getByTestId('replay-notice').filter({ hasText: text }).waitFor({ timeout: ms });
  }
  /** The panel's error (its alert), as a person reads it. */
  get error(): Locator {
    return this.root.locator('[data-state="error"]');
  }
  /** Presses Replay's Fork ("Fork at step K") and waits for the panel's answer: the error's text, or null when it forked. */
  async tryFork(ms = 60_000): Promise<string | null> {
    // With the fork settings open (an error naming its Agent opens them), Fork is pressed there.
    const inSettings = this.page.getByTestId('fork-settings-fork');
    await ((await inSettings.count()) ? inSettings : this.root.getByTestId('fork')).click();
    const answer = this.error.or(this.root.getByTestId('replay-notice').filter({ hasText: 'forked' }));
    await answer.first().waitFor({ timeout: ms });
    return (await this.error.count()) ? this.error.innerText() : null;
  }
  /** The "Agent" Fork and Reopen go on with (empty: the recorded one), in the fork settings dialog. */
  get agentField(): Locator {
    return this.page.getByTestId('fork-settings').getByLabel('Agent', { exact: true });
  }
  /**
   * "Fork with another agent…", in place of Fork and Reopen when the recorded agent would fail
   * again: Replay's alone (in its actions row, or alone when the episode ended at setup).
   */
  get forkOtherButton(): Locator {
    return this.root.getByTestId('replay-fork-other').or(this.root.getByTestId('fork-other'));
  }
  /** The candidates button ("Try candidates for step 3…", "Show the 2 candidates"). */
  get candidatesButton(): Locator {
    return this.root.getByTestId('candidates-open');
  }
  /** Why Roll back and Fork cannot act, in one line under them (a live episode at rest). */
  get branchWhy(): Locator {
    return this.root.locator('#replay-branch-why');
  }
  /** The fork settings dialog's error: the answer to its own Fork or Reopen. */
  get forkSettingsError(): Locator {
    return this.page.getByTestId('fork-settings-error');
  }
  /** Opens the fork settings dialog (Agent and model, labelled, always shown). */
  async openForkSettings(): Promise<void> {
    await this.root.getByTestId('fork-settings-open').click();
    await this.page.getByTestId('fork-settings').waitFor();
  }
  /** The Fork settings dialog's title and its action buttons' labels, as read on screen. */
  async forkSettingsWords(): Promise<{ title: string; buttons: string[] }> {
    const dialog = this.page.getByTestId('fork-settings');
    return {
      title: await dialog.locator('.modal-title').innerText(),
      buttons: await dialog.locator('.fork-settings-actions button').allInnerTexts(),
    };
  }
  /** The pane's scrolling body (under its header with the scrubber). */
  get body(): Locator {
    return this.root.locator('.panel-body');
  }
  /** The "What if…" line under the buttons: the section's summary, or the line that stands for it. */
  /** The scrubber's words for the viewed step and the last (`step 1 / 1`). */
  get scrubLabel(): Locator {
    return this.root.getByTestId('scrub-label');
  }
  get whatIfLine(): Locator {
    return this.root.locator('[data-testid="whatif"] > summary, .whatif-none');
  }
  async whatIf(args: Record<string, unknown>): Promise<string> {
    await this.root.locator('[data-testid="whatif"] > summary').click();
    await this.root.getByTestId('whatif-args').fill(JSON.stringify(args));
    await this.root.getByTestId('whatif-run').click();
    const out = this.root.getByTestId('whatif-stdout');
    await out.waitFor({ timeout: 60_000 });
    return out.innerText();
  }
  /** The what-if result as a person reads it: its note, observation and exit line. */
  get whatIfResult(): Locator {
    return this.root.getByTestId('whatif-result');
  }
}

/**
 * Candidates and compare in their view of their own (over the centre and right columns),
 * opened from the Replay panel.
 */
export class SideBySideView extends PanelObject {
  constructor(page: Page) {
    super(page, 'side-by-side');
  }
  /** The candidates' step field's range beside it (`1–3`): the steps that can have candidates. */
  get candidatesStepHint(): Locator {
    return this.root
      .locator('.count-field', { has: this.page.getByTestId('candidates-step') })
      .locator('.count-range');
  }
  /** Opens candidates for the viewed step (the Replay panel's button), or shows those held. */
  async openCandidates(): Promise<void> {
    await new ReplayPanel(this.page).candidatesButton.click();
    await this.page.locator('[data-testid="side-by-side"][data-view="candidates"]').waitFor();
  }
  /** Opens the compare tab from the Replay panel. */
  async openCompare(): Promise<void> {
    await this.page.getByTestId('replay-controls').getByTestId('compare-open').click();
    await this.page.locator('[data-testid="side-by-side"][data-view="compare"]').waitFor();
  }
  /** The candidate cards shown. */
  cards(): Locator {
    return this.root.getByTestId('candidate');
  }
  /** Fills the candidates form (asks of the agent, typed lines) and tries them side by side. */
  async tryCandidates(options: { n?: number; typed?: string }): Promise<void> {
    if (options.n !== undefined) await this.root.getByTestId('candidates-n').fill(String(options.n));
    if (options.typed !== undefined) await this.root.getByTestId('candidates-typed').fill(options.typed);
    await this.root.getByTestId('candidates-try').click();
  }
  /** Continues with candidate `index` (0-based) and waits until the view closes on the chosen branch. */
  async pick(index: number): Promise<void> {
    await this.cards().nth(index).getByTestId('candidate-pick').click();
    await this.root.waitFor({ state: 'detached', timeout: 60_000 });
  }
  /** Compares the open branch with `branch` and waits for the verdict. */
  async compareWith(branch: string): Promise<Locator> {
    await this.root.getByTestId('compare-with').selectOption(branch);
    await this.root.getByTestId('compare-run').click();
    const verdict = this.root.getByTestId('compare-verdict');
    await verdict.waitFor({ timeout: 60_000 });
    return verdict;
  }
  /** The branches compare offers. */
  compareChoices(): Promise<string[]> {
    return this.root
      .getByTestId('compare-with')
      .locator('option')
      .evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value).filter(Boolean));
  }
  /** What compare's branch list says of each branch it offers, by branch id. */
  compareChoiceTexts(): Promise<Record<string, string>> {
    return this.root
      .getByTestId('compare-with')
      .locator('option')
      .evaluateAll((els) =>
        Object.fromEntries(
          (els as HTMLOptionElement[]).filter((e) => e.value).map((e) => [e.value, e.text.trim()]),
        ),
      );
  }
  /** Compare's "show step N" beside its first difference (absent when this branch lacks that step). */
  get compareShowStep(): Locator {
    return this.root.getByTestId('compare-show-step');
  }
  /** The workspace cell of the pair of this branch's step `step` (the other's where this has none). */
  compareWorkspace(step: number): Locator {
    return this.root.locator(
      `[data-testid="compare-table"] tbody tr[data-step="${step}"] [data-testid="compare-row-workspace"]`,
    );
  }
  /** The verdict compare gives the pair of this branch's step `step`, in words. */
  compareVerdict(step: number): Locator {
    return this.root.locator(
      `[data-testid="compare-table"] tbody tr[data-step="${step}"] [data-testid="compare-row-verdict"]`,
    );
  }
  async close(): Promise<void> {
    await this.root.getByTestId('side-by-side-close').click();
    await this.root.waitFor({ state: 'detached' });
  }
  /** The view's height as a share of the window's. */
  async heightShare(): Promise<number> {
    const box = await this.root.boundingBox();
    const viewport = this.page.viewportSize();
    return box && viewport ? box.height / viewport.height : 0;
  }
  /**
   * What inside the view is wider than its box (a person would scroll it sideways): each as
   * `testid-or-class scrollWidth>clientWidth`. Empty when everything wraps.
   */
  sidewaysScrolls(): Promise<string[]> {
    return this.root.evaluate((root) => {
      const out: string[] = [];
      for (const el of [root, ...Array.from(root.querySelectorAll('*'))] as HTMLElement[]) {
        if (el.clientWidth === 0) continue;
        const style = getComputedStyle(el);
        // An element that shows its overflow clips nothing; its parent is checked in its turn.
        if (style.overflowX === 'visible' && el !== root) continue;
        if (el.scrollWidth > el.clientWidth + 1)
          out.push(
            `${el.getAttribute('data-testid') ?? el.className ?? el.tagName} ${el.scrollWidth}>${el.clientWidth}`,
          );
      }
      return out;
    });
  }
  /**
   * The candidate cards whose content runs past their own edge (drawn under the card beside, or
   * cut by the view), as `#N: what runs past by how much`. Empty when every card holds its lines.
   */
  overflowingCards(): Promise<string[]> {
    return this.cards().evaluateAll((cards) =>
      cards.flatMap((card) => {
        const box = card.getBoundingClientRect();
        const out: string[] = [];
        for (const el of Array.from(card.querySelectorAll('*'))) {
          const r = el.getBoundingClientRect();
          if (r.width === 0 || r.right <= box.right + 0.5) continue;
          out.push(
            `#${Number(card.getAttribute('data-index')) + 1}: ${el.getAttribute('data-testid') ?? el.className} by ${(r.right - box.right).toFixed(0)} px`,
          );
        }
        return out;
      }),
    );
  }
  /** Scrolls the view's body so `testId` is at its top (for a screenshot of that part). */
  async scrollTo(testId: string): Promise<void> {
    await this.root.getByTestId(testId).evaluate((el) => el.scrollIntoView({ block: 'start' }));
  }
}

/** The sandbox panel. */
export class SandboxPanel extends PanelObject {
  constructor(page: Page) {
    super(page, 'sandbox-panel');
  }
  container(): Promise<string> {
    return this.root.getByTestId('sandbox-container').innerText();
  }
  /** The limits line (`1 cpu · 1 GiB · 256 pids · disk 512 MiB`). */
  get limits(): Locator {
    return this.root.getByTestId('sandbox-limits');
  }
  /**
   * The memory line once a stats sample is in: the use, the limit it is read against, and the
   * memory figure of the limits line (the second fact), as shown.
   */
  async memory(ms = 30_000): Promise<{ used: string; limit: string; limitsSay: string }> {
    const line = this.root.getByTestId('sandbox-memory').filter({ hasText: /MiB|GiB/ });
    await line.waitFor({ timeout: ms });
    const m = /^(\S+\s\S+) \/ (\S+\s\S+)/.exec((await line.innerText()).trim());
    const limits = (await this.limits.innerText()).split(' · ');
    return { used: m?.[1] ?? '', limit: m?.[2] ?? '', limitsSay: limits[1] ?? '' };
  }
  /** What the panel says of Docker (`docker down`, …). */
  get dockerStatus(): Locator {
    return this.page.getByTestId('docker-status');
  }
  /** What an ended branch's panel says instead of its sandbox: what it is, and the way to get one. */
  get none(): Locator {
    return this.root.getByTestId('sandbox-none');
  }
  /** An ended branch's Reopen (`Reopen live at step 1`), under that sentence. */
  get reopenButton(): Locator {
    return this.root.getByTestId('sandbox-reopen');
  }
}

/** Removes a temporary home. */
export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
}

/** A box on screen (CSS px). */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The notification area: one line per message, each dismissable. */
export class NoticeBar extends PanelObject {
  constructor(page: Page) {
    super(page, 'notice-bar');
  }
  /** Every message shown, in order. */
  get items(): Locator {
    return this.page.getByTestId('notice');
  }
  /** The messages of one kind (`share`, `save-case`, `idle-release`, …). */
  ofKind(kind: string): Locator {
    return this.page.locator(`[data-testid="notice"][data-kind="${kind}"]`);
  }
  /** The way forward a message of `kind` offers (its button: "Reopen live at step 3"). */
  action(kind: string): Locator {
    return this.ofKind(kind).getByTestId('notice-action');
  }
  /** The texts shown. */
  texts(): Promise<string[]> {
    return this.page.locator('[data-testid="notice"] .notice-text').allInnerTexts();
  }
  /** The text of the newest message of `kind`, and its tooltip (the message with its full paths). */
  async said(kind: string): Promise<{ text: string; title: string | null }> {
    const text = this.ofKind(kind).last().locator('.notice-text');
    return { text: await text.innerText(), title: await text.getAttribute('title') };
  }
}

/** The window's panes as laid out: boxes, splitters, what has focus. */
export class LayoutObject {
  constructor(readonly page: Page) {}
  /** The box of the element with `testId` (null when it is not rendered). */
  async box(testId: string): Promise<Box | null> {
    return this.page.getByTestId(testId).first().boundingBox();
  }
  /** True when the element is fully inside the viewport and is what a click at its centre hits. */
  async onScreen(locator: Locator): Promise<boolean> {
    return locator.evaluate((el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return false;
      if (r.left < 0 || r.top < 0 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) return false;
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return hit !== null && (hit === el || el.contains(hit));
    });
  }
  /**
   * True when a person can read the element whole: inside the viewport, its text not cut
   * by its own box (scrollWidth against clientWidth, so no ellipsis), and not cut by any
   * ancestor that clips its overflow.
   */
  async readable(locator: Locator): Promise<boolean> {
    return (await this.unreadable(locator)) === '';
  }
  /**
   * Why a person cannot read the element whole ('' when they can): the first of the checks of
   * {@link readable} that fails, with the boxes it compared, so a failure says what cut it.
   */
  async unreadable(locator: Locator): Promise<string> {
    return this.cut(locator, true);
  }
  /**
   * Why the element is not wholly in view ('' when it is): outside the window, or cut by an
   * ancestor that clips (its own scrolling list, the pane around it). A timeline row under the
   * Replay pane's edge passed a check against the list's own scroll arithmetic.
   */
  async notWhollyInView(locator: Locator): Promise<string> {
    return this.cut(locator, false);
  }
  /** {@link unreadable}; its text's own overflow only with `text`. */
  private cut(locator: Locator, text: boolean): Promise<string> {
    return locator.evaluate((el, text) => {
      const r = el.getBoundingClientRect();
      const at = (b: DOMRect) =>
        `${b.left.toFixed(1)},${b.top.toFixed(1)}–${b.right.toFixed(1)},${b.bottom.toFixed(1)}`;
      if (r.width === 0 || r.height === 0) return 'no box';
      if (r.left < 0 || r.top < 0 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5)
        return `outside the ${innerWidth}×${innerHeight} viewport: ${at(r)}`;
      if (text && el.scrollWidth > el.clientWidth + 1)
        return `text cut: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`;
      for (let p = el.parentElement; p; p = p.parentElement) {
        const style = getComputedStyle(p);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const b = p.getBoundingClientRect();
        if (
          r.left < b.left - 0.5 ||
          r.right > b.right + 0.5 ||
          r.top < b.top - 0.5 ||
          r.bottom > b.bottom + 0.5
        )
          return `cut by ${p.tagName.toLowerCase()}.${p.className} (${at(b)}, scrollTop ${p.scrollTop}/${p.scrollHeight - p.clientHeight}): element at ${at(r)}`;
      }
      return '';
    }, text);
  }
  /**
   * The controls (buttons, fields, disclosures, and a line that stands for one: the window's
   * KEEP_WHOLE) a scrolling area shows only a strip of: cut by its top or bottom edge, described
   * as `top|bottom testId|text`. Empty when each control is either wholly in the area's view or
   * wholly scrolled out of it.
   */
  async slivers(scroller: Locator): Promise<string[]> {
    return scroller.evaluate((area, selector) => {
      const edge = area.getBoundingClientRect().top + area.clientTop;
      const end = edge + area.clientHeight;
      // As the window judges it (reveal-whole.ts): a row pinned at the top edge (Replay's
      // buttons) is the band's top, one pinned at the bottom (a card's actions) its bottom;
      // what scrolls under them is cut there.
      let top = edge;
      let bottom = end;
      for (const pin of Array.from(area.querySelectorAll('[data-pinned]'))) {
        const r = pin.getBoundingClientRect();
        if (getComputedStyle(pin).position !== 'sticky' || r.height === 0) continue;
        if (r.top <= edge + 0.5) top = Math.max(top, r.bottom);
        else if (r.bottom >= end - 0.5) bottom = Math.min(bottom, r.top);
      }
      const out: string[] = [];
      for (const el of Array.from(area.querySelectorAll(selector))) {
        // As the window judges it (reveal-whole.ts): a field inside a closed section is no strip.
        const pin = el.closest('[data-pinned]');
        if (!el.checkVisibility() || (pin && getComputedStyle(pin).position === 'sticky')) continue;
        const r = el.getBoundingClientRect();
        if (r.height === 0) continue;
        const what = `${el.getAttribute('data-testid') ?? el.tagName.toLowerCase()}|${(el.textContent ?? '').trim().slice(0, 30)}`;
        if (r.top < top - 0.5 && r.bottom > top + 0.5) out.push(`top ${what}`);
        if (r.top < bottom - 0.5 && r.bottom > bottom + 0.5) out.push(`bottom ${what}`);
      }
      return out;
    }, KEEP_WHOLE);
  }
  /**
   * Where `locator` stands against the visible band of the scrolling `area` it is in: `whole`
   * (inside it), `away` (wholly scrolled out), or `cut …` with both boxes (a strip of it shows).
   */
  async bandFit(area: Locator, locator: Locator): Promise<string> {
    const band = await area.evaluate((el) => {
      const top = el.getBoundingClientRect().top + el.clientTop;
      return { top, bottom: top + el.clientHeight };
    });
    const box = await locator.boundingBox();
    if (!box) return 'no box';
    const bottom = box.y + box.height;
    if (box.y >= band.top - 0.5 && bottom <= band.bottom + 0.5) return 'whole';
    if (bottom <= band.top + 0.5 || box.y >= band.bottom - 0.5) return 'away';
    return `cut: ${box.y.toFixed(1)}–${bottom.toFixed(1)} in a band of ${band.top.toFixed(1)}–${band.bottom.toFixed(1)}`;
  }
  /**
   * How many px of `locator` a person sees in the scrolling `area` it is in: its part inside the
   * area's visible band, below a row pinned at the band's top (Replay's buttons, as
   * {@link slivers} judges them). The room a report or a form is read in.
   */
  async shownPx(area: Locator, locator: Locator): Promise<number> {
    const band = await area.evaluate((el) => {
      const edge = el.getBoundingClientRect().top + el.clientTop;
      let top = edge;
      for (const pin of Array.from(el.querySelectorAll('[data-pinned]'))) {
        const r = pin.getBoundingClientRect();
        if (getComputedStyle(pin).position === 'sticky' && r.height > 0 && r.top <= edge + 0.5)
          top = Math.max(top, r.bottom);
      }
      return { top, bottom: Math.min(edge + el.clientHeight, innerHeight) };
    });
    const box = await locator.boundingBox();
    if (!box) return 0;
    return Math.max(0, Math.min(box.y + box.height, band.bottom) - Math.max(box.y, band.top));
  }
  /**
   * What of a scrolling area's content is out of its view ('' when none): its content taller than
   * its box, or the area itself cut by the window's edge. A pane read at rest (the Sandbox's facts)
   * has no hidden part to scroll to: its last row was cut at the window's bottom edge.
   */
  async contentHidden(area: Locator): Promise<string> {
    const out = await area.evaluate((el) =>
      el.scrollHeight > el.clientHeight + 1 ? `content ${el.scrollHeight} px in ${el.clientHeight} px` : '',
    );
    return out || this.notWhollyInView(area);
  }
  /**
   * The section headings in `area` (its panes' headers, the headings inside them) a person cannot
   * read whole even scrolled to, as `text: why`: each is brought into its own pane's view (as a
   * person scrolls to it) and must then lie inside the window and every pane that clips it, and be
   * what is hit at its centre (not a pane drawn over it). Empty when every one can be read.
   */
  async hiddenHeadings(area: Locator): Promise<string[]> {
    const out: string[] = [];
    for (const heading of await area.locator('h2, h3').all()) {
      if (!(await heading.isVisible())) continue;
      const name = (await heading.innerText()).trim().slice(0, 40);
      // Into its pane's view as a person scrolls to it (nearest: a pane that cannot hold it stays cut).
      await heading.evaluate((el) => el.scrollIntoView({ block: 'nearest' }));
      const cut = await this.notWhollyInView(heading);
      if (cut) out.push(`${name}: ${cut}`);
      else if (!(await this.onScreen(heading)))
        out.push(
          `${name}: covered by ${await heading.evaluate((el) => {
            const r = el.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return hit
              ? `${hit.tagName.toLowerCase()} "${(hit.textContent ?? '').trim().slice(0, 30)}"`
              : 'nothing';
          })}`,
        );
    }
    return out;
  }
  /**
   * The most lines any occurrence of `word` in the element's text is drawn on (1 when none is
   * broken across lines, 0 when it does not occur): a card's text broke inside "config.ini".
   */
  async wordLines(locator: Locator, word: string): Promise<number> {
    return locator.evaluate((el, word) => {
      let most = 0;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + word.length);
          const tops = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
          most = Math.max(most, tops.size);
        }
      }
      return most;
    }, word);
  }
  /**
   * How many of a text field's lines a person sees: its line slots (its line-height apart, inside
   * its padding) whose middle a hit at the field's centre column lands on the field itself, not a
   * row pinned over it or a pane's edge.
   */
  async shownLines(locator: Locator): Promise<number> {
    return locator.evaluate((el) => {
      const style = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      const line = parseFloat(style.lineHeight);
      const top = r.top + el.clientTop + parseFloat(style.paddingTop);
      const bottom = r.top + el.clientTop + el.clientHeight - parseFloat(style.paddingBottom);
      const x = r.left + r.width / 2;
      let shown = 0;
      for (let y = top + line / 2; y < bottom; y += line) if (document.elementFromPoint(x, y) === el) shown++;
      return shown;
    });
  }
  /** How many lines the element's text takes on screen (distinct line tops of its text). */
  async lines(locator: Locator): Promise<number> {
    return locator.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size;
    });
  }
  /**
   * True when a field's shown words fit its box (measured in the field's own font): an empty
   * field's placeholder, a select's chosen option beside its arrow (neither reports a cut in
   * scrollWidth: "when a command exits n" passed {@link readable}).
   */
  async fieldTextFits(locator: Locator): Promise<boolean> {
    return locator.evaluate((el) => {
      const field = el as HTMLInputElement | HTMLSelectElement;
      const style = getComputedStyle(field);
      const ctx = document.createElement('canvas').getContext('2d')!;
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      // A select's arrow takes ~16 px of its box beside the text.
      const arrow = field instanceof HTMLSelectElement ? 16 : 0;
      const text =
        field instanceof HTMLSelectElement ? (field.selectedOptions[0]?.text ?? '') : field.placeholder;
      const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - arrow;
      return ctx.measureText(text).width <= room;
    });
  }
  /**
   * Every visible, enabled button whose centre is not hit by the button itself (something lies
   * over it), described as `testId|text → what was hit`. Buttons scrolled out of their pane or
   * the viewport are not looked at (nothing covers them: they are away); with a modal dialog
   * open, only its buttons are (the rest sit behind its backdrop by design).
   */
  coveredButtons(): Promise<string[]> {
    return this.page.evaluate(() => {
      const modal = document.querySelector('[aria-modal="true"]');
      const name = (el: Element | null): string =>
        el
          ? `${el.getAttribute('data-testid') ?? el.tagName.toLowerCase()}|${(el.textContent ?? '').trim().slice(0, 30)}`
          : 'nothing';
      const out: string[] = [];
      for (const b of Array.from(document.querySelectorAll('button'))) {
        if (b.disabled || (modal && !modal.contains(b))) continue;
        const r = b.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || getComputedStyle(b).visibility === 'hidden') continue;
        const x = r.left + r.width / 2;
        const y = r.top + r.height / 2;
        if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
        let away = false;
        for (let p = b.parentElement; p && !away; p = p.parentElement) {
          const st = getComputedStyle(p);
          if (st.overflowX === 'visible' && st.overflowY === 'visible') continue;
          const c = p.getBoundingClientRect();
          away = x < c.left || x > c.right || y < c.top || y > c.bottom;
        }
        if (away) continue;
        const hit = document.elementFromPoint(x, y);
        if (hit && (hit === b || b.contains(hit))) continue;
        out.push(`${name(b)} → ${name(hit)}`);
      }
      return out;
    });
  }
  /**
   * Where a disabled control's reason shows while it is focused or pointed at: the slot line it
   * names (why-line.tsx WhySlot), whichever is on screen.
   */
  get whySaid(): Locator {
    return this.page.locator('[data-why-slot]').filter({ visible: true }).first();
  }
  /**
   * Every visible disabled button that does not say why on screen, covering nothing (issue 33,
   * item 2), as `testId|text: what is wrong`. Each must carry no `title` (its line says the words,
   * once), must stay focusable (`aria-disabled`, not
   * `disabled`) and name its line in `aria-describedby`; pointed at and focused in turn, its reason
   * must be said word for word in a line of its own (a WhyLine at rest, or its WhySlot), read whole
   * in view, whose box overlaps no other control a person sees (a floating bubble lay over the
   * timeline's filter, the walkthrough, the panes' headers).
   */
  async unexplainedDisabled(): Promise<string[]> {
    const buttons = this.page.locator('button:disabled, button[aria-disabled="true"]');
    const out: string[] = [];
    const n = await buttons.count();
    for (let i = 0; i < n; i++) {
      const b = buttons.nth(i);
      if (!(await b.isVisible())) continue;
      const info = await b.evaluate((el) => ({
        name: `${el.getAttribute('data-testid') ?? ''}|${(el.textContent ?? el.getAttribute('aria-label') ?? '').trim().slice(0, 40)}`,
        native: (el as HTMLButtonElement).disabled,
        lines: (el.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id !== ''),
        why: el.getAttribute('data-why') ?? '',
        title: el.getAttribute('title'),
      }));
      // Its words in one place, the line: a native tooltip over it said them again (or, kept from
      // the enabled state, said what the button would do beside why it cannot).
      if (info.title !== null) out.push(`${info.name}: disabled with a title (${info.title.slice(0, 60)})`);
      if (info.native) {
        out.push(`${info.name}: disabled (not focusable, says nothing)`);
        continue;
      }
      if (!info.why || info.lines.length === 0) {
        out.push(`${info.name}: no reason linked by aria-describedby`);
        continue;
      }
      for (const how of ['pointed at', 'focused'] as const) {
        if (how === 'pointed at') {
          // As a person's pointer comes: onto its middle, in view (not retried until it holds still).
          await b.scrollIntoViewIfNeeded();
          const box = await b.boundingBox();
          if (box) await this.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        } else {
          await this.page.mouse.move(0, 0);
          // Focus comes to it (focusin), as a person's Tab brings it: Step keeps the focus the
          // library's start gave it, and focusing it again moved nothing.
          await this.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
          await b.focus();
        }
        // The line of its own that says the reason now (a WhyLine at rest, or its slot).
        const said = async (): Promise<string> =>
          b.evaluate((el, ids) => {
            const why = (el.getAttribute('data-why') ?? '').trim();
            for (const id of ids) {
              const line = document.getElementById(id);
              if (line?.checkVisibility() && (line.textContent ?? '').trim() === why) return id;
            }
            return '';
          }, info.lines);
        const id = await until(said, (found) => found !== '', 2_000, `the reason of ${info.name}`).catch(
          () => '',
        );
        if (id === '') {
          out.push(`${info.name}: ${how}, no visible reason`);
          continue;
        }
        const line = this.page.locator(`[id="${id}"]`);
        // In the flow, beside its control: a floating box (the old bubble) lay over others.
        const floats = await line.evaluate((el) =>
          ['fixed', 'absolute'].includes(getComputedStyle(el).position),
        );
        if (floats) out.push(`${info.name}: ${how}, its reason floats over the window`);
        const cut =
          (await this.unreadable(line)) ||
          (await line.evaluate((el) =>
            el.scrollHeight > el.clientHeight + 1
              ? `cut at its foot: ${el.scrollHeight} > ${el.clientHeight}`
              : '',
          ));
        if (cut) out.push(`${info.name}: ${how}, its reason is not read whole: ${cut}`);
        const over = await this.overlappedControls(line);
        if (over.length) out.push(`${info.name}: ${how}, its reason lies over ${over.join(', ')}`);
      }
      await this.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    }
    await this.page.mouse.move(0, 0);
    return out;
  }
  /**
   * How each line of the element's text begins on screen (its first dozen characters), in order:
   * a line a person reads starting with "—" lost its dash from the word before it (a case's run
   * line wrapped "failed" / "— the agent gave its final answer").
   */
  lineStarts(locator: Locator): Promise<string[]> {
    return locator.evaluate((el) => {
      const starts: string[] = [];
      let top = -Infinity;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const text = n.textContent ?? '';
        for (let i = 0; i < text.length; i++) {
          if (/\s/.test(text[i]!)) continue;
          const range = document.createRange();
          range.setStart(n, i);
          range.setEnd(n, i + 1);
          const b = range.getBoundingClientRect();
          if (b.height === 0) continue;
          if (b.top > top + b.height / 2) {
            starts.push(text.slice(i, i + 12));
            top = b.top;
          }
        }
      }
      return starts;
    });
  }
  /**
   * The controls (buttons, fields, disclosures, tabs, links) a person sees whose box overlaps the
   * element's box, as `testId|text`: each control's box as it shows, cut by the ancestors that
   * clip it (one scrolled under a pinned row is not seen there). Empty when it covers none.
   */
  overlappedControls(locator: Locator): Promise<string[]> {
    return locator.evaluate((line) => {
      const r = line.getBoundingClientRect();
      const shown = (el: Element): DOMRect | null => {
        const b = el.getBoundingClientRect();
        let [l, t, ri, bo] = [b.left, b.top, b.right, b.bottom];
        for (let p = el.parentElement; p; p = p.parentElement) {
          const st = getComputedStyle(p);
          if (st.overflowX === 'visible' && st.overflowY === 'visible') continue;
          const c = p.getBoundingClientRect();
          [l, t, ri, bo] = [
            Math.max(l, c.left),
            Math.max(t, c.top),
            Math.min(ri, c.right),
            Math.min(bo, c.bottom),
          ];
        }
        return ri - l < 1 || bo - t < 1 ? null : new DOMRect(l, t, ri - l, bo - t);
      };
      const out: string[] = [];
      for (const el of Array.from(
        document.querySelectorAll('button, input, select, textarea, a[href], summary, [role="tab"]'),
      )) {
        if (line.contains(el) || el.contains(line) || !el.checkVisibility()) continue;
        const b = shown(el);
        if (!b) continue;
        const w = Math.min(b.right, r.right) - Math.max(b.left, r.left);
        const h = Math.min(b.bottom, r.bottom) - Math.max(b.top, r.top);
        if (w >= 1 && h >= 1)
          out.push(
            `${el.closest('[data-testid]')?.getAttribute('data-testid') ?? el.tagName.toLowerCase()}|${(el.textContent ?? '').trim().slice(0, 30)}`,
          );
      }
      return out;
    });
  }
  /**
   * Visible buttons and links whose accessible name (`aria-label`) does not hold the words they
   * show (WCAG 2.5.3, label in name): a person using speech input says what they see ("click
   * Choose") and a button named otherwise is not found. Glyph-only buttons (✕, ▶) are left out.
   */
  async namesWithoutTheirText(): Promise<string[]> {
    return this.page.evaluate(() => {
      const norm = (t: string) => t.replace(/\s+/g, ' ').trim().toLowerCase();
      const out: string[] = [];
      for (const el of Array.from(
        document.querySelectorAll<HTMLElement>(
          'button[aria-label], a[aria-label], [role="button"][aria-label]',
        ),
      )) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
        const shown = norm(el.innerText ?? '');
        // Words only: a glyph or a key cap is not a name a person says.
        if (!/[a-z]{2}/.test(shown)) continue;
        const name = norm(el.getAttribute('aria-label') ?? '');
        if (!name.includes(shown))
          out.push(`${el.getAttribute('data-testid') ?? el.tagName}: shows "${shown}", named "${name}"`);
      }
      return out;
    });
  }
  /** A splitter between panes, by its test id (`split-right`, …). */
  splitter(testId: string): Locator {
    return this.page.getByTestId(testId);
  }
  /** The element that has focus. */
  get focusedElement(): Locator {
    return this.page.locator(':focus');
  }
  /** Drags a splitter by (dx, dy) with the mouse. */
  async drag(testId: string, dx: number, dy: number): Promise<void> {
    const b = await this.box(testId);
    if (!b) throw new Error(`no splitter ${testId}`);
    const x = b.x + b.width / 2;
    const y = b.y + b.height / 2;
    await this.page.mouse.move(x, y);
    await this.page.mouse.down();
    await this.page.mouse.move(x + dx / 2, y + dy / 2);
    await this.page.mouse.move(x + dx, y + dy);
    await this.page.mouse.up();
  }
  /** What has focus: its test id, role, step and the panel it is in. */
  focused(): Promise<{ testId: string | null; tag: string; step: string | null; panel: string | null }> {
    return this.page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return {
        testId: el?.getAttribute('data-testid') ?? null,
        tag: el?.tagName.toLowerCase() ?? '',
        step: el?.getAttribute('data-step') ?? null,
        panel: el?.closest('[data-testid]:is(section, aside)')?.getAttribute('data-testid') ?? null,
      };
    });
  }
}

/** One piece of text that fails a reading check: too small, or too little contrast. */
export interface TextProblem {
  readonly text: string;
  readonly fontPx: number;
  readonly ratio: number;
  readonly color: string;
  readonly background: string;
}

/**
 * Every visible text on the page with its font size and WCAG contrast against the
 * background drawn behind it (the first opaque background up the tree, semi-transparent
 * ones composited on it). Disabled controls are exempt (WCAG 1.4.3); Monaco's and
 * xterm's own canvases and themes are checked apart.
 */
export function readTexts(page: Page): Promise<TextProblem[]> {
  return page.evaluate(() => {
    type Rgba = [number, number, number, number];
    const parse = (c: string): Rgba => {
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) return [0, 0, 0, 0];
      const p = m[1]
        .split(/[ ,/]+/)
        .filter(Boolean)
        .map(Number);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    };
    const over = (top: Rgba, under: Rgba): Rgba => {
      const a = top[3];
      return [
        top[0] * a + under[0] * (1 - a),
        top[1] * a + under[1] * (1 - a),
        top[2] * a + under[2] * (1 - a),
        1,
      ];
    };
    const lum = (c: Rgba): number => {
      const ch = c.slice(0, 3).map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
    };
    const background = (el: Element): Rgba => {
      const layers: Rgba[] = [];
      for (let e: Element | null = el; e; e = e.parentElement) {
        const bg = parse(getComputedStyle(e).backgroundColor);
        if (bg[3] > 0) layers.push(bg);
        if (bg[3] >= 1) break;
      }
      let out: Rgba = [255, 255, 255, 1];
      for (const l of layers.reverse()) out = over(l, out);
      return out;
    };
    const out: {
      text: string;
      fontPx: number;
      ratio: number;
      color: string;
      background: string;
    }[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = (n.textContent ?? '').trim();
      const el = n.parentElement;
      if (!text || !el) continue;
      if (el.closest('.monaco-editor, .xterm, script, style, option, datalist')) continue;
      if (el.closest(':disabled, [aria-disabled="true"]')) continue;
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (r.width === 0 || r.height === 0 || style.visibility === 'hidden') continue;
      if (r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) continue;
      const bg = background(el);
      const fg = over(parse(style.color), bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      out.push({
        text: text.slice(0, 60),
        fontPx: parseFloat(style.fontSize),
        ratio: Math.round(((a + 0.05) / (b + 0.05)) * 100) / 100,
        color: style.color,
        background: `rgb(${bg.slice(0, 3).map(Math.round).join(', ')})`,
      });
    }
    return out;
  });
}

/** The breakpoint list (left column): the set breakpoints and the form that adds one. */
export class BreakpointsSection extends PanelObject {
  constructor(page: Page) {
    super(page, 'breakpoints');
  }
  /** The button that opens and closes the form (it says how many are set). */
  get toggle(): Locator {
    return this.root.getByTestId('breakpoints-toggle');
  }
  /** The form's kind of breakpoint. */
  get kindField(): Locator {
    return this.root.getByTestId('breakpoint-kind');
  }
  /** The form's Add button. */
  get addButton(): Locator {
    return this.root.getByTestId('breakpoint-add');
  }
  /** The listed breakpoints of kind `kind` (as the engine names it). */
  itemsOfKind(kind: string): Locator {
    return this.root.locator(`[data-testid="breakpoint-item"][data-kind="${kind}"]`);
  }
  /** The breakpoints listed, in words. */
  items(): Promise<string[]> {
    return this.root
      .locator('[data-testid="breakpoint-item"]')
      .evaluateAll((els) => els.map((e) => (e as HTMLElement).innerText.replace(/\s*✕\s*$/, '').trim()));
  }
  /** Adds a breakpoint: `kind` as the engine names it, `value` for the kinds that take one. */
  async add(kind: string, value?: string): Promise<void> {
    if ((await this.kindField.count()) === 0) await this.toggle.click();
    await this.kindField.selectOption(kind);
    if (value !== undefined) await this.root.getByTestId('breakpoint-value').fill(value);
    const before = await this.root.getByTestId('breakpoint-item').count();
    await this.addButton.click();
    // The form's check loads on the first submit (breakpoint-form.ts): the answer — one more
    // item, or the message saying why not — comes a moment after the click, not with it.
    await this.root
      .getByTestId('breakpoint-item')
      .nth(before)
      .or(this.root.getByTestId('breakpoint-message'))
      .first()
      .waitFor({ timeout: 20_000 });
  }
  async remove(text: string): Promise<void> {
    await this.root.getByRole('button', { name: `remove breakpoint: ${text}` }).click();
  }
}

/** The stepper bar: the debugger's buttons, the stop switches, the branch's id and state. */
export class StepperBar extends PanelObject {
  constructor(page: Page) {
    super(page, 'stepper-bar');
  }
  /** The switch "Pause before each tool runs". */
  get stopBeforeTool(): Locator {
    return this.page.getByTestId('stop-before-tool');
  }
  /** The switch "Pause before each answer". */
  get stopBeforeAnswer(): Locator {
    return this.page.getByTestId('stop-before-answer');
  }
  /** The open branch's id. */
  get episodeId(): Locator {
    return this.page.getByTestId('episode-id');
  }
  /** The open branch's task name, beside its id. */
  get taskName(): Locator {
    return this.page.locator('[data-testid="stepper-bar"] .where-task');
  }
  /** The open branch's state badge (running, paused, ended, recorded…). */
  get episodeState(): Locator {
    return this.page.getByTestId('episode-state');
  }
  /** "working…" beside the state while a Step, Continue or Stop waits for its answer. */
  get working(): Locator {
    return this.page.getByTestId('episode-working');
  }
  /** Why it stopped, above the inspector (absent when the held card says it). */
  get stopReason(): Locator {
    return this.page.getByTestId('stop-reason');
  }
  /** How a recorded branch ended, in a sentence. */
  get endReason(): Locator {
    return this.page.getByTestId('end-reason');
  }
  /** Under the end line: "Details: what the verifier printed", folded. */
  get verifierOutput(): Locator {
    return this.page.getByTestId('verifier-output');
  }
  /** Opens the end line's Details and returns what the verifier printed (its last lines). */
  async readVerifierOutput(): Promise<string> {
    await this.verifierOutput.locator('summary').click();
    return this.verifierOutput.locator('pre').innerText();
  }
  /** Why the last action could not be done, under the stepper. */
  get error(): Locator {
    return this.page.getByTestId('stepper-error');
  }
  /** What to do instead of what was asked (Step on a recorded episode, a key nothing offers): a hint, not an error. */
  get hint(): Locator {
    return this.page.getByTestId('stepper-hint');
  }
  /** The Continue button. */
  get continueButton(): Locator {
    return this.page.getByTestId('btn-continue');
  }
  /** The Keys button (opens the key sheet). */
  get keysButton(): Locator {
    return this.page.getByTestId('btn-keys');
  }
  /** The question asked before a running episode is stopped for another. */
  get stopQuestion(): Locator {
    return this.page.getByTestId('stop-question');
  }
  /** The question's "Stop it" answer. */
  get stopQuestionStop(): Locator {
    return this.page.getByTestId('stop-question-stop');
  }
  /** Waits until a branch is open in the stepper (its state shows). */
  /** The branch on screen (its id in the bar), or '' before one is. */
  async branch(): Promise<string> {
    return (await this.episodeId.getAttribute('data-id')) ?? '';
  }
  /** Waits until a branch other than `left` is on screen (a fork, a rollback's), and returns it. */
  async waitForBranchOtherThan(left: string, ms = 60_000): Promise<string> {
    return until(
      () => this.branch(),
      (id) => id !== '' && id !== left,
      ms,
      `a branch other than ${left} on screen`,
    );
  }
  async waitForBranch(ms = 60_000): Promise<void> {
    await this.episodeState.waitFor({ timeout: ms });
  }
  /** Waits until the stepper is in `state` (`paused`, `running`, `ended`, …). */
  async waitForState(state: string, ms = 60_000): Promise<void> {
    await this.page.locator(`[data-testid="stepper-bar"][data-state="${state}"]`).waitFor({ timeout: ms });
  }
  /** Waits until the stepper is stopped: paused or idle, nothing running. */
  async waitForStopped(ms = 30_000): Promise<void> {
    await this.page
      .locator('[data-testid="stepper-bar"]:is([data-state="paused"], [data-state="idle"])')
      .waitFor({ timeout: ms });
  }
  /** Waits until the branch has ended (or none is open any more). */
  async waitForEnd(ms = 60_000): Promise<void> {
    await this.page
      .locator('[data-testid="stepper-bar"]:is([data-state="ended"], [data-state="none"])')
      .waitFor({ timeout: ms });
  }
}

/** Where a held step waits: before its tools run, or before the agent gets the model's answer. */
export type HeldStage = 'before_tool' | 'before_answer';

/**
 * The held-action card in the inspector: the step that waits for the person, its decided
 * call or the model's answer, and what the person can do (run it, edit, give the result).
 */
export class HeldActionCard {
  constructor(readonly page: Page) {}
  /** The card (any stage). */
  get root(): Locator {
    return this.page.getByTestId('tool-inspector').getByTestId('held-action');
  }
  /** Waits for the card at `stage` (and saying `text` in it, e.g. `Paused before step 3 runs`). */
  async waitFor(stage: HeldStage, text?: string, ms = 60_000): Promise<this> {
    await this.page
      .getByTestId('tool-inspector')
      .locator(`[data-testid="held-action"][data-stage="${stage}"]`, text ? { hasText: text } : {})
      .waitFor({ timeout: ms });
    return this;
  }
  /** Waits until no step is held (the card is gone). */
  async waitGone(ms = 60_000): Promise<void> {
    await this.page.locator('[data-testid="held-action"]').waitFor({ state: 'detached', timeout: ms });
  }
  /** Waits for the card holding step `step` before its tools run. */
  waitBeforeTool(step: number, ms = 60_000): Promise<this> {
    return this.waitFor('before_tool', `Paused before step ${step} runs`, ms);
  }
  /** The card's heading: why and where it stopped. */
  get heading(): Locator {
    return this.root.locator('h3');
  }
  /** Whether the card is on screen. */
  async shown(): Promise<boolean> {
    return (await this.root.count()) > 0;
  }
  /** The decided call(s), in words. */
  get call(): Locator {
    return this.root.getByTestId('held-call');
  }
  /** The decided call's arguments. */
  get args(): Locator {
    return this.root.getByTestId('held-args');
  }
  /** The model's answer text (before the answer reaches the agent). */
  get content(): Locator {
    return this.root.getByTestId('held-content');
  }
  /** What the model had said, once a person edited the held answer. */
  get original(): Locator {
    return this.root.getByTestId('held-original');
  }
  /** Why it stopped (which breakpoint fired). */
  get why(): Locator {
    return this.root.getByTestId('held-why');
  }
  /** The mark that the held answer was edited by a person. */
  get edited(): Locator {
    return this.root.getByTestId('held-edited');
  }
  /** The editor of arguments, answer or result. */
  get editor(): Locator {
    return this.root.getByTestId('held-editor');
  }
  /** Why an edit was refused. */
  get error(): Locator {
    return this.root.getByTestId('held-error');
  }
  /** The note that the editor's text is not JSON yet. */
  get syntax(): Locator {
    return this.root.getByTestId('held-syntax');
  }
  /**
   * The card's action row (Run it / Give it to the agent, or Save and run / Save / Cancel while
   * editing): pinned at the inspector's bottom edge, so it is in view however long the card.
   */
  get actions(): Locator {
    return this.root.getByTestId('held-actions');
  }
  /** "Run it": runs the held step as it stands. */
  get runButton(): Locator {
    return this.root.getByTestId('held-run');
  }
  /** "Save and run". */
  get saveRunButton(): Locator {
    return this.root.getByTestId('held-save-run');
  }
  async run(): Promise<void> {
    await this.runButton.click();
  }
  /** "Edit arguments". */
  get editArgumentsButton(): Locator {
    return this.root.getByTestId('held-edit-arguments');
  }
  async editArguments(): Promise<void> {
    await this.editArgumentsButton.click();
  }
  async editAnswer(): Promise<void> {
    await this.root.getByTestId('held-edit-answer').click();
  }
  async replaceResult(): Promise<void> {
    await this.root.getByTestId('held-replace-result').click();
  }
  /** Fills the editor with `text` and presses "Save and run". */
  async saveAndRun(text: string): Promise<void> {
    await this.editor.fill(text);
    await this.saveRunButton.click();
  }
  /** Fills the editor with `text` and presses "Save" (the step waits on). */
  async save(text: string): Promise<void> {
    await this.editor.fill(text);
    await this.root.getByTestId('held-save').click();
  }
}
