// $STEPBOX_HOME/settings.json: durations read one way, every mistake named with its fix.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../electron/services/settings-file.js';
import { formatSpan } from '../../shared/format-span.js';
import { DEFAULT_SETTINGS, parseSettings } from '../../shared/settings.js';
import { runCli } from '../support/cli.js';

function messageOf(input: unknown): string {
  const r = parseSettings(input);
  if (r.ok) throw new Error(`expected an error for ${JSON.stringify(input)}`);
  expect(r.error.code).toBe('invalid_input');
  return r.error.message;
}

describe('settings.json', () => {
  it('defaults to releasing idle sandboxes after 15 min and 30 s after the last window closed', () => {
    expect(DEFAULT_SETTINGS).toEqual({ ui: { idle_release: 15 * 60_000, release_after_close: 30_000 } });
    expect(parseSettings({})).toEqual({ ok: true, value: DEFAULT_SETTINGS });
    expect(parseSettings({ ui: {} })).toEqual({ ok: true, value: DEFAULT_SETTINGS });
  });

  it('reads durations as people write them; 0 and "off" turn a release off', () => {
    const idle = (v: unknown) => {
      const r = parseSettings({ ui: { idle_release: v } });
      if (!r.ok) throw new Error(r.error.message);
      return r.value.ui.idle_release;
    };
    expect(idle('15m')).toBe(900_000);
    expect(idle('90s')).toBe(90_000);
    expect(idle('1h30m')).toBe(5_400_000);
    expect(idle(600)).toBe(600_000);
    expect(idle('off')).toBeNull();
    expect(idle(0)).toBeNull();
    expect(idle('0')).toBeNull();
  });

  it('names the key, what is wrong and what to write', () => {
    expect(messageOf({ ui: { idle_release: 'soon' } })).toMatch(
      /settings\.json: ui\.idle_release: "soon" is not a duration like "15m", "90s" or "1h", a number of seconds, or "off"/,
    );
    expect(messageOf({ ui: { idle_release: '0.5s' } })).toMatch(/ui\.idle_release: "0\.5s" is under 1 s/);
    expect(messageOf({ ui: { release_after_close: -5 } })).toMatch(
      /ui\.release_after_close: -5 is not a duration/,
    );
    expect(messageOf({ ui: { idle_relase: '5m' } })).toMatch(
      /ui\.idle_relase: unknown setting — did you mean "idle_release"\? \(allowed: idle_release, release_after_close\)/,
    );
    expect(messageOf({ UI: {} })).toMatch(/UI: unknown setting — did you mean "ui"\?/);
    expect(messageOf({ ui: { idle_release: true } })).toMatch(/ui\.idle_release/);
    expect(messageOf({ ui: { idle_release: true } })).toMatch(/Fix that line, or remove it for the default/);
  });

  describe('the file in the home', () => {
    let home = '';
    afterEach(() => rmSync(home, { recursive: true, force: true }));

    it('is optional, read when present, and a broken one is an error naming it', () => {
      home = mkdtempSync(join(tmpdir(), 'stepbox-settings-'));
      const file = join(home, 'settings.json');
      expect(loadSettings(home)).toEqual({ ok: true, value: { settings: DEFAULT_SETTINGS, file } });
      writeFileSync(file, JSON.stringify({ ui: { idle_release: '2m' } }));
      const read = loadSettings(home);
      expect(read.ok && read.value.settings.ui.idle_release).toBe(120_000);
      writeFileSync(file, '{"ui": {');
      const broken = loadSettings(home);
      expect(broken.ok).toBe(false);
      if (!broken.ok) expect(broken.error.message).toContain(`${file} is not valid JSON`);
      writeFileSync(file, JSON.stringify({ ui: { idle_release: 'never' } }));
      const bad = loadSettings(home);
      if (bad.ok) throw new Error('expected an error');
      expect(bad.error.message).toContain(`${file}: ui.idle_release: "never" is not a duration`);
    });
  });

  it('stepbox serve refuses to start on a mistaken settings file, naming the key and the fix (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-settings-serve-'));
    try {
      writeFileSync(join(dir, 'settings.json'), JSON.stringify({ ui: { idle_relase: '5m' } }));
      const run = await runCli(['serve', '--port', '0'], { env: { STEPBOX_HOME: dir }, timeoutMs: 60_000 });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `${join(dir, 'settings.json')}: ui.idle_relase: unknown setting — did you mean "idle_release"?`,
      );
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says spans in whole units, rounded down', () => {
    expect(formatSpan(0)).toBe('0 s');
    expect(formatSpan(59_999)).toBe('59 s');
    expect(formatSpan(60_000)).toBe('1 min');
    expect(formatSpan(15 * 60_000)).toBe('15 min');
    expect(formatSpan(65 * 60_000)).toBe('1 h 05 min');
    expect(formatSpan(-5)).toBe('0 s');
  });
});
