import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScript } from '../../electron/engine/agents/scripted-agent.js';
import { caseNames, casesDir, loadCase } from '../../electron/engine/cases/case-library.js';

const REQUIRED = [
  'tool-loop-vague-error',
  'fallback-writes-none',
  'timeout-too-strict',
  'fatal-error',
  'reward-hacking-edit-test',
  'state-leak-no-reset',
  'context-overflow-drops-goal',
  'hallucinated-tool-name',
  'network-assumed',
  'permission-gave-up',
  'output-flood',
  'destructive-clean-start',
];

describe('case library content', () => {
  it('bundles at least the twelve classic failures', () => {
    expect(caseNames()).toEqual(expect.arrayContaining(REQUIRED));
  });
  for (const name of REQUIRED) {
    it(`${name}: both variants load, scripts parse, walkthrough covers what/where/why/fix`, () => {
      const broken = loadCase(name);
      const fixed = loadCase(name, { fixed: true });
      expect(existsSync(join(casesDir(), name, 'fixed'))).toBe(true);
      expect(broken.taskPath !== fixed.taskPath || broken.agentPath !== fixed.agentPath).toBe(true);
      for (const v of [broken, fixed])
        expect(parseScript(readFileSync(v.agentPath, 'utf8'), v.agentPath).length).toBeGreaterThan(0);
      for (const heading of ['What you will see', 'Where to look', 'Why it happens', 'The fix'])
        expect(broken.readme).toContain(`## ${heading}`);
      for (const rule of broken.expected.rules) expect(broken.readme).toContain(`\`${rule}\``);
    });
  }
  it('the state-leak case runs two episodes without reset, its fix resets', () => {
    expect(loadCase('state-leak-no-reset').task.sandbox.reset_between_episodes).toBe(false);
    expect(loadCase('state-leak-no-reset').expected.episodes).toBe(2);
    expect(loadCase('state-leak-no-reset', { fixed: true }).task.sandbox.reset_between_episodes).toBe(true);
  });
});
