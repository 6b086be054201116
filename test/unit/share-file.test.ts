import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { writeLongTrace } from '../../electron/bench/ui-trace.js';
import { parseRedactions } from '../../electron/engine/export/redact.js';
import { openEngine } from '../../electron/engine/open-engine.js';
import { shareData } from '../../electron/engine/share/share-data.js';
import { shareHtml } from '../../electron/engine/share/share-html.js';

/** The JSON documents a share file embeds (the index, then the step chunks). */
function embedded(html: string): unknown[] {
  return [...html.matchAll(/<script type="application\/octet-stream"[^>]*>([^<]*)<\/script>/g)].map((m) =>
    JSON.parse(gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8')),
  );
}

describe('stepbox share: the file', () => {
  it('embeds every step in chunks behind a CSP that forbids fetching anything, and redacts like export', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-unit-'));
    const trace = await writeLongTrace(home, 1_200);
    const { store } = openEngine({ home, sweep: false });
    const data = await shareData(store, trace.branch, parseRedactions(['/counter/']));
    expect(data.steps.length).toBe(1_201);
    expect(data.redacted).toBe(true);
    const html = shareHtml(data);
    // The one inline script runs by its hash: no 'unsafe-inline' for scripts.
    const viewer = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const hash = createHash('sha256').update(viewer, 'utf8').digest('base64');
    expect(html).toContain(
      `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; img-src data:"`,
    );
    expect(html.match(/<script(?![^>]*application\/octet-stream)[^>]*>/g)).toEqual(['<script>']);
    expect(html).not.toMatch(/script-src[^;"]*unsafe-inline/);
    // Nothing outside the file: no src= or href= to anywhere, no URL the viewer could load.
    expect(html).not.toMatch(/\s(src|href)="(?!#)/);
    const [index, ...chunks] = embedded(html) as [{ steps: { step: number }[] }, ...{ step: number }[][]];
    expect(index.steps).toHaveLength(1_201);
    expect(chunks.map((c) => [c[0].step, c[c.length - 1].step])).toEqual([
      [0, 499],
      [500, 999],
      [1000, 1200],
    ]);
    // The pattern is gone from everything embedded (the long trace writes counter.txt each step).
    expect(JSON.stringify(chunks)).not.toMatch(/counter/);
    expect(JSON.stringify(chunks)).toContain('[REDACTED]');
    // A call's time in the window's words (shared/format-duration.ts), not a raw number of ms.
    const results = chunks.flat().flatMap((s) => (s as { results?: { duration?: unknown }[] }).results ?? []);
    expect(results.length).toBeGreaterThan(1_000);
    for (const r of results) expect(r.duration).toMatch(/^\d+(\.\d)? ms$|^\d\.\d\d s$/);
  });

  it('strips control sequences from everything it shows: ESC/CSI colours, OSC-8 links, bidi overrides, C1', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-share-unit-'));
    const trace = await writeLongTrace(home, 3);
    const { store } = openEngine({ home, sweep: false });
    const data = await shareData(store, trace.branch, parseRedactions([]));
    const hostile =
      '\u001b]8;;https://evil.example/\u0007click me\u001b]8;;\u0007 \u001b[31mred\u001b[0m \u202etxt.exe\u2066 \u009b2J\u0007\u0008 done';
    const planted = {
      ...data,
      task: { ...data.task, name: `task ${hostile}`, goal: hostile },
      steps: data.steps.map((s, i) => (i === 1 ? { ...s, action: hostile, [`key ${hostile}`]: hostile } : s)),
    };
    const html = shareHtml(planted);
    const all = JSON.stringify(embedded(html)) + html.replace(/<script[\s\S]*?<\/script>/g, '');
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(all).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.stringify(embedded(html))).not.toMatch(/\\u001b|\\u009b|\\u202e|evil\.example/);
    const index = embedded(html)[0] as { steps: { action: string }[]; task: { goal: string } };
    expect(index.steps[1].action).toBe('click me red txt.exe  done');
    expect(index.task.goal).toBe('click me red txt.exe  done');
  });
});
