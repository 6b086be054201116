/** Debian's Chromium, where the bench and the window's journey tests drive the window (web mode). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * How it is started, headless, for the bench and the e2e tests alike. Chromium 156's headless
 * mode gives each new context a browser window whose omnibox popup is a WebUI preloaded in a
 * renderer of its own: ~1 s of CPU, on two cores, beside every fresh page. A person's link opens
 * a tab in a window already open, and the page driven here has no omnibox: the last flag turns
 * that preload off.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup',
];
