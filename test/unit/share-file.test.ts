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
    expect(html).toContain(
      `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`,
    );
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
});
