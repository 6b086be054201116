import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { RewardChart } from '../../renderer/src/components/reward-chart';
import { rewardColour } from '../../renderer/src/model/reward-colour';
import { stepRow } from '../support/renderer-fixtures';

/** The legend's swatch colour of each component, from the chart's markup. */
function legendColours(rewards: Record<string, number>[]): Record<string, string> {
  const rows = rewards.map((r, i) => stepRow(i + 1, { rewards: r, reward: 0 }));
  const html = renderToStaticMarkup(
    createElement(RewardChart, { rows, viewed: null, onSelect: () => undefined }),
  );
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/data-component="([^"]+)"><i style="background:([^"]+)"/g)) out[m[1]] = m[2];
  return out;
}

describe('one colour per reward component, in the legend and the inspector', () => {
  it('a component keeps its colour whichever others the branch has (the legend coloured by place)', () => {
    const all = legendColours([{ format_valid: 0.1, repeated_action: -0.2, tool_error: -0.1 }]);
    const fewer = legendColours([{ repeated_action: -0.2, tool_error: -0.1 }]);
    expect(Object.keys(all).sort()).toEqual(['format_valid', 'repeated_action', 'tool_error']);
    expect(fewer.repeated_action).toBe(all.repeated_action);
    expect(fewer.tool_error).toBe(all.tool_error);
    for (const [name, colour] of Object.entries(all)) expect(colour).toBe(rewardColour(name));
  });

  it('the engine’s components each have their own colour; another name always gets the same one', () => {
    const known = ['format_valid', 'repeated_action', 'tool_error', 'verifier'].map(rewardColour);
    expect(new Set(known).size).toBe(known.length);
    expect(rewardColour('style_points')).toBe(rewardColour('style_points'));
    expect(rewardColour('style_points')).toMatch(/^#[0-9a-f]{6}$/);
  });
});
