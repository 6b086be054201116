/**
 * The shared file (`stepbox share`) as a colleague opens it: from file://, offline, with a
 * page object for what it shows (its steps, inspector, flags, branches and walkthrough).
 */
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';

/** A shared file open in the browser, with the requests it tried and its uncaught errors. */
export class SharedFile {
  constructor(
    readonly page: Page,
    /** Every request that was not the file itself (there must be none). */
    readonly requests: string[],
    readonly errors: string[],
  ) {}
  /** The step rows drawn (virtualized: a screen of them, not every step). */
  get steps(): Locator {
    return this.page.getByTestId('share-step');
  }
  /** Step `step`'s row. */
  step(step: number): Locator {
    return this.page.locator(`[data-testid="share-step"][data-step="${step}"]`);
  }
  /** The field that filters the steps by their text. */
  get filterField(): Locator {
    return this.page.getByPlaceholder('filter steps by text');
  }
  /** The inspector: the chosen step and the tab open in it. */
  get inspector(): Locator {
    return this.page.getByTestId('share-inspector');
  }
  /** The inspector's title (`Step 2 · …`). */
  get inspectorTitle(): Locator {
    return this.page.getByTestId('share-inspector-title');
  }
  /** The inspector's sections, by their headings (a file's `deleted docs/notes.md`, a flag's). */
  get sectionHeadings(): Locator {
    return this.inspector.locator('.section > h3');
  }
  /** The lines of the diff under the section headed `heading` (`- text`, `+ text`, `  text`). */
  diffLines(heading: string): Locator {
    return this.inspector
      .locator('.section', { has: this.page.locator('h3', { hasText: heading }) })
      .locator('.diff .line');
  }
  /** Opens one of the inspector's tabs. */
  async tab(name: 'output' | 'files' | 'qa'): Promise<void> {
    await this.page.getByTestId(`share-tab-${name}`).click();
  }
  /** What the inspector says above a step whose long texts the file holds cut (head and tail). */
  get cutNotice(): Locator {
    return this.page.getByTestId('share-cut-notice');
  }
  /** The notice's one line; clicked, it opens to each text's counts and the command. */
  get cutSummary(): Locator {
    return this.page.getByTestId('share-cut-summary');
  }
  /** The command the notice gives to print the texts whole. */
  get cutCommand(): Locator {
    return this.page.getByTestId('share-cut-command');
  }
  /** The line above the panes saying what the file left out to stay small. */
  get omitted(): Locator {
    return this.page.locator('#omitted');
  }
  /** The QA flags of the episode. */
  /** The header's counts (`3 steps · 2 QA flags`). */
  get count(): Locator {
    return this.page.getByTestId('share-count');
  }
  /** The header's verdict line: the verifier's verdict and final reward, as the window says them. */
  get verdict(): Locator {
    return this.page.getByTestId('share-verdict');
  }
  /** What the verifier printed, under the verdict's Details (its summary clicked to read it). */
  async readVerifierOutput(): Promise<string> {
    const details = this.page.getByTestId('share-verifier-output');
    await details.locator('summary').click();
    return details.locator('pre').innerText();
  }
  /** The header's ids line: episode, branch, agent, time. */
  /** The header's status badge: the status and why it ended, in words. */
  get status(): Locator {
    return this.page.locator('#status');
  }
  get ids(): Locator {
    return this.page.locator('#ids');
  }
  /** The header's goal: what the task asked. */
  get goal(): Locator {
    return this.page.locator('#goal');
  }
  get flags(): Locator {
    return this.page.getByTestId('share-flags');
  }
  /** The episode's branches. */
  get branches(): Locator {
    return this.page.getByTestId('share-branches');
  }
  /** The case's walkthrough, when the episode is a case's. */
  get walkthrough(): Locator {
    return this.page.getByTestId('share-walkthrough');
  }
  /** Closes the file (its browser context). */
  close(): Promise<void> {
    return this.page.context().close();
  }
}

/**
 * Opens a shared file the way a colleague does: from file://, with the browser offline
 * and every request that is not the file itself counted (there must be none).
 */
export async function openShared(browser: Browser, file: string): Promise<SharedFile> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.setOffline(true);
  const requests: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file://')) return route.continue();
    requests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  // A renderer already up, as in a browser a person has open: the measurement is the file's, not the browser's start.
  await page.setContent('<p>ready</p>');
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="true"]');
  return new SharedFile(page, requests, errors);
}
