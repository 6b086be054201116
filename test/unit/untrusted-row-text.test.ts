import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import { oneLine } from '../../shared/one-line.js';
import { outputResult } from '../../shared/tool-result.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode } from '../support/traces.js';

// An agent's recorded arguments and answer are its own text: a colour, a window title, a
// hyperlink, a bell, a bidi override ("Trojan Source") or 10 MB on one line. The window's
// timeline rows drew the escapes as boxes and let the override reorder the command read, where
// `stepbox show`'s line (the same oneLine) went through the terminal's filter.

const ESC = '\u001b';
const HOSTILE = `${ESC}[31mRED${ESC}[0m${ESC}]0;pwned-title\u0007${ESC}]8;;http://evil/\u0007link${ESC}]8;;\u0007\r\b\u0000\u0007bell\u202erm -rf /\u202c`;
/** C0/C1 controls (tab and newline aside, which a row flattens) and the bidi controls. */
// eslint-disable-next-line no-control-regex -- the controls are what is looked for
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("a row's one line of an agent's text", () => {
  it('keeps the words and drops every control sequence, control character and bidi control', () => {
    expect(oneLine(`wc -l ${HOSTILE}`, 160)).toBe('wc -l REDlink bellrm -rf /');
  });

  it('reads only the head of a 10 MB line, and says it was cut', () => {
    const line = oneLine('B'.repeat(10_000_000), 160);
    expect(line).toHaveLength(160);
    expect(line.endsWith('…')).toBe(true);
    // Cut before the filter: whitespace and escapes at the head still end in "…", never a bare head.
    expect(oneLine(`${' '.repeat(20_000)}x`, 80)).toBe('…');
  });

  it("the window's timeline rows of a recorded episode carry none of it", async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-untrusted-rows-'));
    try {
      const store = openEpisodeStore(home);
      const ep = await writeSampleEpisode(store, {
        agent: 'codex',
        recipe: 'codex@0.171.0',
        script: [
          {
            tool: 'exec_command',
            args: { cmd: `wc -l ${HOSTILE}` },
            result: { ...outputResult(`3 ${HOSTILE}\n`), exit_code: undefined, stderr: undefined },
          },
          { final: `done ${HOSTILE}${'B'.repeat(10_000_000)}` },
        ],
      });
      const trace = store.readTrace(store.resolve(ep.branch));
      const rows = stepRowsOf(trace.events.filter((e) => e.type !== 'header'));
      expect(rows.map((r) => r.summary)).toEqual([
        expect.stringMatching(/^setup/),
        'wc -l REDlink bellrm -rf /',
        expect.stringMatching(/^done REDlink bellrm -rf \/B+…$/),
      ]);
      for (const r of rows) expect(r.summary).not.toMatch(CONTROL);
      expect(rows[2].summary.length).toBeLessThanOrEqual(160);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
