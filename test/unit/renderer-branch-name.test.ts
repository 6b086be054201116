import { createElement, Fragment } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { colour } from '../../renderer/src/components/json-text';
import { branchName, branchNameOf } from '../../renderer/src/model/branch-name';
import { flaggedSuccess } from '../../shared/end-words';
import { branchSummary } from '../support/renderer-fixtures';

describe('branchName: a branch by its readable name, not its id', () => {
  const main = branchSummary({ branch: 'b-main', created: 1 });
  const a = branchSummary({ branch: 'b-z', parent_branch: 'b-main', fork_step: 1, created: 2 });
  const b = branchSummary({ branch: 'b-a', parent_branch: 'b-z', fork_step: 1, created: 3 });
  const c = branchSummary({ branch: 'b-m', parent_branch: 'b-a', fork_step: 1, created: 4 });
  const all = [main, a, b, c];

  it('numbers the forks at one step by when they were made: three nested forks all read "fork@1"', () => {
    expect(all.map((x) => branchName(x, all))).toEqual([
      'main',
      'fork 1 at step 1',
      'fork 2 at step 1',
      'fork 3 at step 1',
    ]);
    // Alone at its step, a fork needs no number.
    expect(branchName(a, [main, a])).toBe('fork at step 1');
    expect(branchName(a)).toBe('fork at step 1');
    // The tree's short form, numbered the same way.
    expect(all.map((x) => branchName(x, all, { short: true }))).toEqual([
      'main',
      'fork 1@1',
      'fork 2@1',
      'fork 3@1',
    ]);
    expect(branchName(a, [main, a], { short: true })).toBe('fork@1');
  });

  it('names a branch by its id in sentences, keeping the id only when it is not known', () => {
    expect(branchNameOf('b-a', all)).toBe('fork 2 at step 1');
    expect(branchNameOf('b-gone', all)).toBe('b-gone');
  });
});

describe('the light JSON view of a tool result', () => {
  const html = (json: string) => renderToStaticMarkup(createElement(Fragment, null, ...colour(json)));
  const result = JSON.stringify({ ok: true, stdout: 'file\n67  README.md\n', stderr: '' }, null, 2);

  it('shows a text value with line breaks as its lines, its JSON kept beside it', () => {
    const out = html(result);
    // Drawn: the lines, not `"file\n67  README.md\n"` as one escaped string.
    expect(out).toContain('>file\n67  README.md</span>');
    expect(out).toContain('data-json="&quot;file\\n67  README.md\\n&quot;"');
    // A value without a line break stays a JSON string.
    expect(out).toContain('<span class="j-str">&quot;&quot;</span>');
  });
});

describe("a success QA flagged: the header's rule, for every view", () => {
  it('is flagged by its flags at warning or worse, or by a count of them', () => {
    expect(flaggedSuccess('succeeded', 1)).toBe(true);
    expect(flaggedSuccess('succeeded', 0)).toBe(false);
    expect(flaggedSuccess('failed', 2)).toBe(false);
    expect(flaggedSuccess('succeeded', [{ severity: 'warning' }])).toBe(true);
    expect(flaggedSuccess('succeeded', [{ severity: 'info' }])).toBe(false);
  });
});
