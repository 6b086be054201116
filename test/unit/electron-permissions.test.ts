import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

// Electron cannot run here: the main process is type-checked (tsc -b) and read. The finding of
// @doyensec/electronegativity 1.10.3 over electron/ (PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK):
// no permission request/check handler, so a page could be granted the camera, notifications…

const MAIN = readFileSync(resolve(PROJECT_ROOT, 'electron/main.ts'), 'utf8');

describe('the Electron main process denies every permission', () => {
  it('sets a request, a check and a device handler on the default session and on every web contents', () => {
    const body = /function denyPermissions\(s: Session\): void \{([\s\S]*?)\n\}/.exec(MAIN)?.[1] ?? '';
    expect(body).toMatch(/s\.setPermissionRequestHandler\(/);
    expect(body).toMatch(/s\.setPermissionCheckHandler\(/);
    expect(body).toMatch(/s\.setDevicePermissionHandler\(\(\) => false\)/);
    // Granted: nothing but a clipboard write from the app's own page.
    expect(body).toMatch(
      /callback\(permission === 'clipboard-sanitized-write' && isAppUrl\(contents\.getURL\(\)\)\)/,
    );
    expect(body).toMatch(/=> permission === 'clipboard-sanitized-write' && isAppUrl\(origin\)/);
    expect(body).not.toMatch(/callback\(true\)|=> true/);
    expect(MAIN).toMatch(/await app\.whenReady\(\);\n\s*denyPermissions\(session\.defaultSession\);/);
    expect(MAIN).toMatch(
      /'web-contents-created', \(_e, contents\) => \{\n\s*denyPermissions\(contents\.session\);/,
    );
  });
});
