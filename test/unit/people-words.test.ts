// Words the window, the shared file and a saved case show people, each rule in one place:
// rule labels (not snake_case ids), the one plural rule, end reasons in words, the Fork
// settings title in its buttons' words, and a saved case's walkthrough without placeholders.
import { describe, expect, it } from 'vitest';
import { QaRuleId, flag } from '../../shared/qa/flag';
import { ruleLabel, ruleTitle } from '../../shared/qa/rule-label';
import { agreeing, countOf } from '../../shared/count-of';
import { endText } from '../../shared/end-words';
import { flagRules } from '../../renderer/src/model/flag-rules';
import { forkSettingsTitle } from '../../renderer/src/components/fork-settings';
import { walkthrough } from '../../electron/engine/cases/case-from-episode';

describe('words for people', () => {
  it('labels every QA rule in words; the id stays in the tooltip', () => {
    for (const rule of QaRuleId.options) {
      expect(ruleLabel(rule), rule).not.toMatch(/_/);
      expect(ruleLabel(rule), rule).toMatch(/^[A-Z]/);
    }
    expect(ruleLabel('unverified_success')).toBe('Unverified success');
    expect(ruleLabel('some_new_rule')).toBe('Some new rule');
    expect(ruleTitle('loop', 'called 3×')).toBe('Loop (QA rule loop): called 3×');
    const f = (rule: QaRuleId, step: number) => ({ rule, step, severity: 'warning' as const, message: '' });
    expect(flagRules([f('unknown_tool', 1), f('unverified_success', 3), f('unknown_tool', 2)])).toBe(
      'Unknown tool ×2 · Unverified success',
    );
  });

  it('agrees a word with its count, nouns and verbs alike', () => {
    expect(countOf(1, 'candidate')).toBe('1 candidate');
    expect(countOf(3, 'candidate')).toBe('3 candidates');
    expect(agreeing(1, 'differs', 'differ')).toBe('differs');
    expect(agreeing(2, 'differs', 'differ')).toBe('differ');
  });

  it('says why an episode ended in words', () => {
    expect(endText('failed', 'final_answer', false)).toBe(
      'the agent gave its final answer; the verifier failed',
    );
    expect(endText('error', 'script_exhausted')).toBe('the agent script ran out');
  });

  it("titles Fork settings in its buttons' words", () => {
    expect(forkSettingsTitle(true, 3)).toBe('Fork from step 3');
    expect(forkSettingsTitle(false, 3)).toBe('Fork or reopen live at step 3');
  });

  it("writes a saved case's walkthrough whole from the episode: no TODO left to fill in", () => {
    const text = walkthrough(
      'my-case',
      'ep-1',
      [flag('unverified_success', 3, 'error', 'the final answer claims success but the verifier failed')],
      [],
      {
        goal: 'Install requests',
        steps: 3,
        end: { status: 'failed', end_reason: 'final_answer', verifierPassed: false },
      },
    );
    expect(text).not.toMatch(/TODO/);
    expect(text).toContain(
      'The agent is asked: “Install requests.” It takes 3 steps. The episode failed: the agent gave its final answer; the verifier failed. QA flags it: Unverified success.',
    );
    expect(text).toContain('- **Timeline, step 3**: Unverified success (`unverified_success`, error)');
    expect(text).toContain('`stepbox case verify my-case`');
  });
});
