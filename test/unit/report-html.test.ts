import { describe, expect, it } from 'vitest';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import type { BranchCheck } from '../../electron/engine/qa/check-branches.js';
import { renderReport } from '../../electron/engine/report/html-report.js';
import { loadedBranch, QaTrace, sh } from '../support/qa-traces.js';

describe('HTML report', () => {
  const ok = new QaTrace(undefined, { episode: 'ok1' })
    .step({ calls: [sh('cat test_x.py')], reward: 0.1 })
    .step({ calls: [sh('python3 test_x.py')], reward: 0.1 })
    .step({ final: 'ok' })
    .end('succeeded', { success: true, exit_code: 0 }, { reward: 1 });
  const looped = new QaTrace(undefined, { episode: 'loop1' })
    .repeat(3, { calls: [sh('curl https://example.com/x', { exit_code: 1 })], reward: -0.2 })
    .step({ final: 'I could not do it' })
    .end('failed', { success: false, exit_code: 1 });
  const traces = [ok, looped];
  const branches = traces.map(loadedBranch);
  const checks = new Map<string, BranchCheck>(
    branches.map((b) => [
      b.branch,
      { episode: b.episode, branch: b.branch, ...checkEpisode({ events: b.trace.events, torn: false }) },
    ]),
  );
  const { html, summary } = renderReport('batch <test>', branches, checks);
  it('reports success rate, flag counts and failures grouped by root cause', () => {
    expect(summary).toMatchObject({
      episodes: 2,
      succeeded: 1,
      successRate: 0.5,
      flagCounts: { loop: 1 },
      failureGroups: { loop: ['loop1'] },
    });
    expect(html).toContain('50.0%');
    expect(html).toMatch(/<table id="flag-counts">.*loop/s);
    expect(html).toMatch(/<h3>loop/);
    // The steps that show the loop are listed with their calls.
    expect(html).toMatch(/<td>3<\/td><td><code>execute_shell/);
  });
  it('is self-contained: inline SVG charts, no script, no http(s) URL, escaped content', () => {
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/<script|<link|src=/i);
    expect((html.match(/<svg /g) ?? []).length).toBeGreaterThanOrEqual(4);
    expect(html).toContain('<polyline');
    expect(html).toContain('batch &lt;test&gt;');
  });
});
