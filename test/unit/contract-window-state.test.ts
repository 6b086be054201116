import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWindowState, saveWindowState, windowStatePath } from '../../electron/window-state.js';

describe('window state', () => {
  it('starts from the default, remembers bounds, and ignores a corrupt file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-ws-'));
    const path = windowStatePath(join(dir, 'user-data'));
    expect(loadWindowState(path)).toEqual({ width: 1400, height: 900, maximized: false });
    saveWindowState(path, { x: 10, y: 20, width: 1000, height: 700, maximized: true });
    expect(loadWindowState(path)).toEqual({ x: 10, y: 20, width: 1000, height: 700, maximized: true });
    writeFileSync(path, '{"width": 5}');
    expect(loadWindowState(path).width).toBe(1400);
    writeFileSync(path, 'not json');
    expect(loadWindowState(path).height).toBe(900);
  });
});
