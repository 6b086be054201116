import {
  app,
  BrowserWindow,
  dialog,
  Menu,
  net,
  protocol,
  session,
  shell,
  type MenuItemConstructorOptions,
  type Session,
} from 'electron';
import { existsSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AppCommand } from '../shared/contract/index.js';
import { onInterrupt } from './engine/interrupt.js';
import { logger } from './engine/log.js';
import { bindContract, eventChannel } from './ipc.js';
import { contentSecurityPolicy } from './server/security.js';
import { projectDir } from './server.js';
import { createAppServices, type AppServices } from './services/app-services.js';
import { loadEnginePorts } from './services/load-engine.js';
import { loadSettings } from './services/settings-file.js';
import { stepboxHome } from './engine/stepbox-home.js';
import { checkSqliteBinding } from './engine/trace/sqlite.js';
import { loadWindowState, saveWindowState, windowStatePath } from './window-state.js';

// The desktop shell: app lifecycle and windows only. Everything the window can do goes
// through the contract (ipc.ts → services); the page runs sandboxed without Node.

const log = logger('main');
const SCHEME = 'app';
const APP_ORIGIN = `${SCHEME}://stepbox`;
const RENDERER_DIR = join(projectDir(), 'renderer', 'dist');
const PRELOAD = fileURLToPath(new URL('./preload.cjs', import.meta.url));

/** True for the app's own page (and only it): `app://stepbox/…`. */
function isAppUrl(url: string): boolean {
  return url === APP_ORIGIN || url.startsWith(`${APP_ORIGIN}/`);
}

// codeCache: V8 keeps the window's compiled code between launches, as it does for http(s)
// pages (a custom scheme gets none without it): from the second launch on, the window's
// chunks (React and the panels, ~450 KB) are not parsed and compiled again before the first
// render. Allowed only for a standard scheme, which this is.
protocol.registerSchemesAsPrivileged([
  {
    scheme: SCHEME,
    privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, codeCache: true },
  },
]);
app.enableSandbox();

/** Serves `renderer/dist` under `app://stepbox/` with the strict CSP (Monaco's blob: workers allowed). */
function serveRenderer(): void {
  const csp = contentSecurityPolicy(0).replace(/ ws:\/\/\S+/g, '');
  protocol.handle(SCHEME, async (request) => {
    const { pathname } = new URL(request.url);
    let relative: string;
    try {
      relative = normalize(decodeURIComponent(pathname === '/' ? '/index.html' : pathname)).replace(
        /^[/\\]+/,
        '',
      );
    } catch {
      // A malformed %-escape is a bad request, not a file name.
      return new Response('bad path', { status: 400 });
    }
    const file = join(RENDERER_DIR, relative);
    if (!file.startsWith(RENDERER_DIR + sep) || !existsSync(file))
      return new Response('not found', { status: 404 });
    const res = await net.fetch(pathToFileURL(file).toString());
    const headers = new Headers(res.headers);
    headers.set('Content-Security-Policy', csp);
    headers.set('X-Content-Type-Options', 'nosniff');
    return new Response(res.body, { status: res.status, headers });
  });
}

/** The application menu: the debugger keys are shown here but left to the page (so they work in the terminal too). */
function buildMenu(send: (command: AppCommand) => void): Menu {
  const debugItem = (
    label: string,
    accelerator: string,
    command: AppCommand,
  ): MenuItemConstructorOptions => ({
    label,
    accelerator,
    registerAccelerator: false,
    click: () => send(command),
  });
  const template: MenuItemConstructorOptions[] = [
    ...(process.platform === 'darwin' ? [{ role: 'appMenu' as const }] : []),
    { role: 'fileMenu' },
    { role: 'editMenu' },
    {
      label: 'Debug',
      submenu: [
        debugItem('Continue', 'F5', 'continue'),
        debugItem('Step', 'F10', 'step'),
        debugItem('Pause', 'F6', 'pause'),
        debugItem('Stop', 'Shift+F5', 'stop'),
        { type: 'separator' },
        debugItem('Toggle Breakpoint', 'F9', 'toggleBreakpoint'),
      ],
    },
    {
      label: 'View',
      submenu: [
        { role: 'toggleDevTools' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
  ];
  return Menu.buildFromTemplate(template);
}

function createWindow(): BrowserWindow {
  const statePath = windowStatePath(app.getPath('userData'));
  const state = loadWindowState(statePath);
  const win = new BrowserWindow({
    ...(state.x !== undefined && state.y !== undefined ? { x: state.x, y: state.y } : {}),
    width: state.width,
    height: state.height,
    show: false,
    title: 'stepbox',
    backgroundColor: '#1e1e1e',
    webPreferences: {
      preload: PRELOAD,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      webviewTag: false,
      spellcheck: false,
    },
  });
  if (state.maximized) win.maximize();
  win.once('ready-to-show', () => win.show());
  const remember = () => {
    if (win.isDestroyed()) return;
    const bounds = win.getNormalBounds();
    saveWindowState(statePath, { ...bounds, maximized: win.isMaximized() });
  };
  win.on('close', remember);
  void win.loadURL(`${APP_ORIGIN}/index.html`);
  return win;
}

/**
 * Every permission a page asks for (camera, microphone, geolocation, notifications, MIDI,
 * HID/serial/USB, …) is denied, asked or checked: the window needs none. The one exception
 * is writing text to the clipboard from the app's own page (copying from the terminal or
 * the inspector), which reads nothing.
 */
function denyPermissions(s: Session): void {
  s.setPermissionRequestHandler((contents, permission, callback) => {
    callback(permission === 'clipboard-sanitized-write' && isAppUrl(contents.getURL()));
  });
  s.setPermissionCheckHandler(
    (_contents, permission, origin) => permission === 'clipboard-sanitized-write' && isAppUrl(origin),
  );
  s.setDevicePermissionHandler(() => false);
}

/** Navigation and new windows are blocked; http(s) links open in the system browser; permissions denied. */
function lockDown(): void {
  app.on('web-contents-created', (_e, contents) => {
    denyPermissions(contents.session);
    contents.on('will-navigate', (event, url) => {
      if (!isAppUrl(url)) event.preventDefault();
    });
    contents.on('will-redirect', (event, url) => {
      if (!isAppUrl(url)) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      if (/^https?:\/\//.test(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
}

/** On quit: stop live episodes (traces closed) and destroy their sandboxes before exiting. */
function cleanUpOnQuit(services: AppServices, unbind: () => void): void {
  let cleaned = false;
  app.on('before-quit', (event) => {
    if (cleaned) return;
    event.preventDefault();
    cleaned = true;
    unbind();
    services
      .dispose()
      .catch((e: unknown) => log.error(`cleanup on quit: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => app.quit());
  });
}

async function start(): Promise<void> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  lockDown();
  await app.whenReady();
  denyPermissions(session.defaultSession);
  // The episode index needs better-sqlite3 built for Electron (native/electron-<ABI>/); without
  // it nothing can be listed or recorded, so say so with the fix instead of failing later.
  const sqlite = checkSqliteBinding();
  if (sqlite) {
    log.error(`${sqlite.code}: ${sqlite.message}`);
    dialog.showErrorBox('stepbox cannot open its episode database', sqlite.message);
    app.quit();
    return;
  }
  // A settings file with a typo says which key and the fix, rather than running on defaults unseen.
  const settings = loadSettings(stepboxHome());
  if (!settings.ok) {
    log.error(`${settings.error.code}: ${settings.error.message}`);
    dialog.showErrorBox('stepbox cannot read its settings', settings.error.message);
    app.quit();
    return;
  }
  serveRenderer();
  const services = createAppServices(await loadEnginePorts(process.env.STEPBOX_HOME || undefined), {
    pickPath: () => pickProject(BrowserWindow.getFocusedWindow()),
    settings: settings.value,
  });
  const unbind = bindContract(services, isAppUrl);
  cleanUpOnQuit(services, unbind);
  let win = createWindow();
  Menu.setApplicationMenu(
    buildMenu((command) => {
      if (!win.isDestroyed()) win.webContents.send(eventChannel('app.command'), { command });
    }),
  );
  app.on('second-instance', () => {
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) win = createWindow();
  });
  // Quitting stops every live episode; on macOS the app stays without a window, and the last
  // window's close releases them after ui.release_after_close (ipc.ts → WindowPresence).
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  // A terminal's Ctrl+C or a service manager's stop quits the same way: traces closed, sandboxes destroyed.
  // The one interrupt handler (engine/interrupt.ts): later signals cannot cut the cleanup short.
  onInterrupt(() => app.quit());
}

/**
 * Open…'s native dialog: a project folder or a task.json (the window types a path in web
 * mode instead). Null when cancelled.
 */
async function pickProject(parent: BrowserWindow | null): Promise<string | null> {
  const options: Electron.OpenDialogOptions = {
    title: 'Open a project folder or a task.json',
    properties: ['openDirectory', 'openFile'],
    filters: [{ name: 'Task file', extensions: ['json'] }],
  };
  const chosen = parent ? await dialog.showOpenDialog(parent, options) : await dialog.showOpenDialog(options);
  return chosen.canceled || chosen.filePaths.length === 0 ? null : chosen.filePaths[0];
}

void start();
