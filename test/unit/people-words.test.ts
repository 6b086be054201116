// Words the window, the shared file and a saved case show people, each rule in one place:
// rule labels (not snake_case ids), the one plural rule, end reasons in words, the Fork
// settings title in its buttons' words, and a saved case's walkthrough without placeholders.
import { describe, expect, it } from 'vitest';
import { QaRuleId, flag } from '../../shared/qa/flag';
import { ruleLabel, ruleTitle } from '../../shared/qa/rule-label';
import { agreeing, countOf } from '../../shared/count-of';
import { endText, errorMarkText } from '../../shared/end-words';
import { flagRules } from '../../renderer/src/model/flag-rules';
import { forkSettingsTitle } from '../../renderer/src/components/fork-settings';
import { walkthrough } from '../../electron/engine/cases/case-from-episode';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rewardLabel, rewardTitle } from '../../shared/reward-label';
import { ordinal } from '../../shared/count-of';
import { callText } from '../../shared/step-summary';
import { decidedText } from '../../renderer/src/model/edit-words';
import { marksShown, PERSON_MARKS } from '../../renderer/src/model/row-marks';
import { evaluateRequestBreakpoints } from '../../electron/engine/harness/breakpoints';
import { OPENAI_SPEC } from '../../shared/agent-kind';
import { AGENT_SPEC_FORMS, MODEL_SOURCE_FORMS } from '../../electron/engine/agents/agent-spec';
import { dockerReachable } from '../../electron/engine/docker/ping';
import type { DockerEngine } from '../../electron/engine/docker/client';

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

  it('says an error\'s mark in a row in words, never its code (a model server\'s error read "model_er…")', () => {
    expect(errorMarkText('model_error')).toBe('model failed');
    expect(errorMarkText('script_exhausted')).toBe('script ran out');
    // A code with no words of its own is still read as words.
    expect(errorMarkText('snapshot_failed')).toBe('snapshot failed');
  });

  it("titles Fork settings in its buttons' words", () => {
    expect(forkSettingsTitle(true, 3)).toBe('Fork at step 3');
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

  it('names reward components in words, the key kept for the tooltip', () => {
    expect(rewardLabel('format_valid')).toBe('format valid');
    expect(rewardLabel('repeated_action')).toBe('repeated action penalty');
    expect(rewardLabel('tool_error')).toBe('tool error penalty');
    expect(rewardLabel('my_custom_bonus')).toBe('my custom bonus');
    expect(rewardTitle('tool_error')).toContain('tool_error');
  });

  it("says the cases' QA flags in words in the paragraph a case card shows", () => {
    const root = join(__dirname, '../../resources/cases');
    for (const id of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      const readme = readFileSync(join(root, id.name, 'README.md'), 'utf8');
      const seen = /## What you will see\n([\s\S]*?)\n\n/.exec(readme)?.[1] ?? '';
      expect(seen, id.name).not.toMatch(/QA\s+raises/);
      // A rule's id in a card read `reward_hacking`; its label is what the window's flags say.
      expect(seen, id.name).not.toMatch(/\*\*`[a-z]+_[a-z_]+`\*\*|\*\*`loop`\*\*/);
      expect(seen, id.name).toMatch(/QA\s+flags\s+\*\*[A-Z]/);
    }
  });

  it('says which message a request breakpoint matched, in words', () => {
    expect([1, 2, 3, 4, 8, 11, 12, 13, 21, 22, 101].map(ordinal)).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '8th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '101st',
    ]);
    const messages = [
      { role: 'system', content: 'you are' },
      { role: 'user', content: 'go' },
      { role: 'tool', content: 'IndexError: list index' },
    ];
    const hit = evaluateRequestBreakpoints([{ kind: 'request_match', pattern: 'IndexError' }], {
      messages,
      tools: [],
    } as unknown as Parameters<typeof evaluateRequestBreakpoints>[1]);
    expect(hit?.message).toBe(
      'the 3rd message the model is about to read (a tool result) matches /IndexError/',
    );
  });

  it('writes a call as a person reads it, in the terminal and the edit note alike', () => {
    expect(callText('write_file', { path: 'notes.txt', content: 'hello world\n' })).toBe(
      'write_file notes.txt (12 B)',
    );
    expect(callText('Bash', { command: 'ls -la' })).toBe('Bash ls -la');
    const original = {
      content: null,
      tool_calls: [{ id: 'c1', function: { name: 'Bash', arguments: '{"command":"python3 app.py"}' } }],
    };
    expect(decidedText(original, 'c1')).toBe('Bash python3 app.py');
    expect(decidedText(original, null)).not.toContain('{"command"');
  });

  it('says what each person mark means, and lists only the marks the rows carry', () => {
    const row = { injected: false, human: true, overridden: false, edited: true };
    expect(marksShown([row, { ...row, human: false, edited: false, injected: true }])).toEqual([
      'injected',
      'human',
      'edited',
    ]);
    expect(Object.values(PERSON_MARKS).map((m) => m.words)).toEqual([
      'injected observation',
      'person typed',
      'overridden result',
      'edited call',
    ]);
  });

  it('writes an endpoint agent one way in every help text', () => {
    expect(OPENAI_SPEC).toBe('openai:MODEL@URL');
    for (const text of [AGENT_SPEC_FORMS, MODEL_SOURCE_FORMS]) {
      expect(text).toContain(OPENAI_SPEC);
      expect(text).not.toMatch(/\[@|@BASE_URL/);
    }
  });

  it('says Docker is not running, the errno left to the details', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED /var/run/docker.sock'), {
      code: 'ECONNREFUSED',
    });
    const engine = { docker: { ping: () => Promise.reject(refused) } } as unknown as DockerEngine;
    const r = await dockerReachable(engine, 1000, {});
    expect(r.ok).toBe(false);
    expect(r.headline).toBe('Docker is not running');
    expect(r.headline).not.toContain('ECONNREFUSED');
    expect(r.detail).toContain('ECONNREFUSED');
  });
});
