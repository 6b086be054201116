// Untrusted text never drives the terminal: every class of control sequence is removed
// (7-bit and C1 spellings), newlines and tabs stay, and the CLI applies it to everything
// it prints from a trace — `show`, `list`, `search`, logs — while `--json` keeps the data.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../support/cli.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { jsonTerminalSafe, terminalSafe } from '../../shared/terminal-text.js';
import { recordedOutput } from '../../renderer/src/model/recorded-output.js';
import { writeSampleEpisode } from '../support/traces.js';

// In-process CLI runs open the store and index: slow on a loaded machine, never a hang.
vi.setConfig({ testTimeout: 60_000 });

const ESC = '\u001b';
const BEL = '\u0007';
const ST = `${ESC}\\`;

/** Each attack, by name: a payload a terminal would obey. */
const ATTACKS: Record<string, string> = {
  'OSC 52 clipboard (BEL)': `${ESC}]52;c;${Buffer.from('rm -rf ~').toString('base64')}${BEL}`,
  'OSC 52 clipboard (ST)': `${ESC}]52;c;cm0gLXJmIH4=${ST}`,
  'OSC 0 title': `${ESC}]0;pwned${BEL}`,
  'OSC 2 title': `${ESC}]2;pwned${ST}`,
  'OSC 8 hyperlink': `${ESC}]8;;http://evil.example${ST}click${ESC}]8;;${ST}`,
  'CSI cursor up + erase line': `${ESC}[1A${ESC}[2K`,
  'CSI clear screen': `${ESC}[2J${ESC}[H`,
  'CSI alternate screen': `${ESC}[?1049h`,
  'CSI SGR colour': `${ESC}[31;1m`,
  'CSI window ops (report title)': `${ESC}[21t`,
  DCS: `${ESC}P1$r0m${ST}`,
  APC: `${ESC}_hidden${ST}`,
  PM: `${ESC}^hidden${ST}`,
  SOS: `${ESC}Xhidden${ST}`,
  'C1 CSI': '\u009b2J',
  'C1 OSC': '\u009d0;pwned\u009c',
  'C1 DCS': '\u0090hidden\u009c',
  'C1 NEL/IND/RI': '\u0085\u0084\u008d',
  'charset switch': `${ESC}(0${ESC})B`,
  'keypad mode / RIS': `${ESC}=${ESC}c`,
  'lone ESC': `${ESC}\n`,
  'backspace overwrite': 'rm -rf /\b\b\b\b\b\b\b\b',
  'bell and form feed': `${BEL}\f\v`,
  DEL: '\u007f',
  'bidi override (Trojan Source)': '\u202eevil\u202c \u2066isolated\u2069 \u202a\u202b\u202d',
};

/** What no safe text may contain: ESC, C0 but TAB/LF, CR, DEL, C1, bidi controls. */
// eslint-disable-next-line no-control-regex -- the test looks for control characters
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('terminalSafe', () => {
  it('removes every class of control sequence and keeps the surrounding text', () => {
    for (const [name, payload] of Object.entries(ATTACKS)) {
      const out = terminalSafe(`before ${payload} after`);
      expect(out, name).not.toMatch(UNSAFE);
      expect(out.startsWith('before '), name).toBe(true);
      expect(out.endsWith(' after'), name).toBe(true);
    }
    // The payload of a string sequence is gone too, not left as text.
    expect(terminalSafe(`a${ATTACKS['OSC 0 title']}b`)).toBe('ab');
    expect(terminalSafe(`a${ATTACKS['C1 OSC']}b`)).toBe('ab');
    expect(terminalSafe(`a${ATTACKS['CSI SGR colour']}red${ESC}[0mb`)).toBe('aredb');
  });

  it('keeps newlines, tabs and text; shows a line hidden behind a carriage return', () => {
    expect(terminalSafe('a\tb\nc\r\nd')).toBe('a\tb\nc\nd');
    expect(terminalSafe('rm -rf /\rls      ')).toBe('rm -rf /\nls      ');
    expect(terminalSafe('héllo wörld — 你好 ✓ 🙂')).toBe('héllo wörld — 你好 ✓ 🙂');
    // An unterminated OSC swallows the rest, as the terminal would have.
    expect(terminalSafe(`ok${ESC}]52;c;AAAA`)).toBe('ok');
  });

  it('escapes, in a JSON document, only what JSON leaves raw, so the data is unchanged', () => {
    const value = { out: Object.values(ATTACKS).join('|') };
    const json = jsonTerminalSafe(JSON.stringify(value));
    expect(json).not.toMatch(UNSAFE);
    expect(JSON.parse(json)).toEqual(value);
  });

  it("cleans what the window's recorded-output terminal shows", () => {
    const text = recordedOutput({
      step: 1,
      calls: [
        {
          call: { id: 'c1', name: 'execute_shell', arguments: { command: `echo ${ATTACKS['OSC 0 title']}` } },
          result: {
            ok: true,
            exit_code: 0,
            stdout: ATTACKS['OSC 52 clipboard (BEL)'] + 'x\n',
            stderr: ATTACKS['C1 CSI'],
            duration_ms: 1,
            bytes: 1,
          },
        },
      ],
      human: [{ command: `ls${ATTACKS['CSI clear screen']}` }],
      final: `done${ATTACKS['bidi override (Trojan Source)']}`,
    } as unknown as Parameters<typeof recordedOutput>[0]);
    // Our own colours stay; nothing from the trace adds an OSC, C1 or bidi control, or a clear.
    // eslint-disable-next-line no-control-regex -- looking for the controls
    expect(text).not.toMatch(/\u001b\]|[\u0080-\u009f\u202a-\u202e\u2066-\u2069]|\u001b\[2J/);
  });
});

describe('the CLI prints trace text terminal-safe', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-term-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const cli = (...argv: string[]) => runMain(home, argv);

  it('show, list and search strip what a hostile agent and its tools wrote; --json keeps it exactly', async () => {
    const hostile = Object.values(ATTACKS).join(' ');
    const store = openEpisodeStore(home);
    const ep = await writeSampleEpisode(store, {
      task: `task${ATTACKS['OSC 2 title']}`,
      script: [
        {
          args: { command: `echo hi${ATTACKS['CSI clear screen']}` },
          result: { stdout: `marker ${hostile}\n`, stderr: ATTACKS['C1 OSC'] },
        },
        { final: `finished ${hostile}` },
      ],
    });
    for (const argv of [
      ['show', ep.episode],
      ['list'],
      ['search', '--tool', 'execute_shell'],
      ['check', ep.episode],
    ]) {
      const { code, out, err } = await cli(...argv);
      expect(argv[0] === 'check' ? [0, 1] : [0], argv.join(' ')).toContain(code);
      expect(out + err, argv.join(' ')).not.toMatch(UNSAFE);
    }
    const { out } = await cli('show', ep.episode, '--json');
    expect(out).not.toMatch(UNSAFE);
    expect(out).toContain('\\u001b]52;c;');
  });
});
