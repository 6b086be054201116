import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { RewardChart } from '../../renderer/src/components/reward-chart';
import { rewardColours } from '../../renderer/src/model/reward-colour';
import { stepRow } from '../support/renderer-fixtures';

/** The chart's markup for rows with these rewards. */
function chartHtml(rewards: Record<string, number>[]): string {
  const rows = rewards.map((r, i) => stepRow(i + 1, { rewards: r, reward: 0 }));
  return renderToStaticMarkup(createElement(RewardChart, { rows, viewed: null, onSelect: () => undefined }));
}

/** The legend's swatch colour of each component, from the chart's markup. */
function legendColours(rewards: Record<string, number>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of chartHtml(rewards).matchAll(/data-component="([^"]+)"[^>]*><i style="background:([^"]+)"/g))
    out[m[1]] = m[2];
  return out;
}

describe('one colour per reward component, in the legend and the inspector', () => {
  it('a component keeps its colour whichever others the branch has (the legend coloured by place)', () => {
    const all = legendColours([{ format_valid: 0.1, repeated_action: -0.2, tool_error: -0.1 }]);
    const fewer = legendColours([{ repeated_action: -0.2, tool_error: -0.1 }]);
    expect(Object.keys(all).sort()).toEqual(['format_valid', 'repeated_action', 'tool_error']);
    expect(fewer.repeated_action).toBe(all.repeated_action);
    expect(fewer.tool_error).toBe(all.tool_error);
    const one = rewardColours(Object.keys(all));
    for (const [name, colour] of Object.entries(all)) expect(colour).toBe(one.get(name));
  });

  it('the engine’s components each have their own colour; another name always gets the same one', () => {
    const known = [...rewardColours(['format_valid', 'repeated_action', 'tool_error', 'verifier']).values()];
    expect(new Set(known).size).toBe(known.length);
    expect(rewardColours(['style_points']).get('style_points')).toBe(
      rewardColours(['style_points']).get('style_points'),
    );
    expect(rewardColours(['style_points']).get('style_points')).toMatch(/^#[0-9a-f]{6}$/);
  });

  it('two components drawn together never share a colour (the bench trace’s progress and penalty were both red)', () => {
    const colours = legendColours([{ format: 0.1, progress: 0.2, penalty: -0.2 }]);
    expect(Object.keys(colours).sort()).toEqual(['format', 'penalty', 'progress']);
    expect(colours.progress).not.toBe(colours.penalty);
    expect(new Set(Object.values(colours)).size).toBe(3);
    // Eight names of their own, eight colours; none of them a known component's.
    const many = rewardColours(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'tool_error']);
    expect(new Set(many.values()).size).toBe(9);
  });

  it('a penalty hangs below the chart’s zero line and its legend entry says so; a gain stands on it', () => {
    const html = chartHtml([
      { format: 0.1, penalty: -0.2 },
      { format: 0.1, penalty: 0 },
    ]);
    expect(html).toMatch(/data-component="penalty" data-negative="true"/);
    expect(html).not.toMatch(/data-component="format" data-negative/);
    // Each path is rectangles `M x y h w v h …`: the penalty's start at the zero line (y = 22), the gain's end there.
    const colours = legendColours([{ format: 0.1, penalty: -0.2 }]);
    const path = (c: string) =>
      new RegExp(`<path d="M[\\d.]+ ([\\d.]+)h[\\d.]+v([\\d.]+)[^"]*" fill="${c}"`).exec(html);
    const pen = path(colours.penalty);
    const fmt = path(colours.format);
    expect(Number(pen?.[1])).toBe(22);
    expect(Number(fmt?.[1]) + Number(fmt?.[2])).toBeCloseTo(22, 5);
  });
});
