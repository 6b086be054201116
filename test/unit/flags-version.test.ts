import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEngine } from '../../electron/engine/open-engine.js';
import { readBranch } from '../../electron/services/branch-trace.js';
import { storeTracePort } from '../../electron/services/trace-port.js';
import { writeSampleEpisode } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-flags-version-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

// ui-flagged-success, twice in full runs under load: an ended episode showed "2 QA flags" in the
// timeline and ⚑2 in the library where QA finds 3. A check of the branch as read before its end
// was written ran after the end was written and the trace closed: its flags (no
// unverified_success, which the end's failed verifier makes) were kept under the closed
// trace's version, in the memo and in the index, and every later open read them back.
describe('QA flags are kept under the version of the trace they were computed from', () => {
  it('a check of a trace read before its end does not stand for the ended trace', async () => {
    const engine = openEngine({ home, sweep: false });
    const ep = await writeSampleEpisode(engine.store, { end: null });
    const port = storeTracePort(engine);
    if (!port.check) throw new Error('the store port checks branches');
    const before = readBranch(port, ep.branch);
    // The end: the agent said "All done." and the verifier failed (unverified_success).
    await ep.writer.close({
      step: 3,
      steps: 3,
      return: 0,
      status: 'failed',
      end_reason: 'final_answer',
      verifier: { success: false, exit_code: 1 },
    });
    // The late check of the old read lands after the end was written (and the trace closed).
    const late = await port.check(before);
    expect(late.map((f) => f.rule)).not.toContain('unverified_success');
    // Opened now: the ended trace's own flags, in the view and in the library's listing.
    const now = await port.check(readBranch(port, ep.branch));
    expect(now.map((f) => f.rule)).toContain('unverified_success');
    const listed = (await port.listBranches()).find((b) => b.branch === ep.branch);
    expect(listed?.flags).toBe(now.length);
    await engine.close();
  });
});
