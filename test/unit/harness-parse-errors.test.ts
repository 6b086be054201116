import { afterEach, describe, expect, it } from 'vitest';
import { startEpisode } from '../../electron/engine/harness/index.js';
import { final, memorySupply, memoryTask, ofType, script, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

const tc = (name: unknown, args: unknown) => ({
  content: null,
  tool_calls: [
    {
      id: `c${Math.random().toString(36).slice(2, 7)}`,
      type: 'function',
      function: { name, arguments: args },
    },
  ],
});

/** Ten kinds of malformed model output, each a line of the script. */
const MALFORMED = [
  { content: '' },
  { content: '   ' },
  tc('execute_shell', '{"command": ls}'),
  tc('execute_shell', '["ls"]'),
  tc('rm_rf', '{}'),
  tc('execute_shell', '{}'),
  tc('execute_shell', '{"command": 1}'),
  tc('execute_shell', '{"command": "ls", "extra": 1}'),
  { content: '```json\n{"name": "execute_shell", "arguments": {"command": "ls"\n```' },
  { content: '{"name": "browse_web", "arguments": {"url": "x"}}' },
  { content: null, tool_calls: [{ id: 'nofn', type: 'function' }] },
];

describe('malformed model output in an episode', () => {
  it('each kind becomes a parse_error event and an observation that answers it', async () => {
    env = tempHome();
    const agent = script(env.dir, 'bad.jsonl', [...MALFORMED, final('giving up')]);
    const c = await startEpisode({
      task: memoryTask({ max_steps: 20 }),
      agentSpec: `scripted:${agent}`,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await c.run();
    const errors = ofType(c.history(), 'parse_error');
    expect(errors.map((e) => e.step)).toEqual(MALFORMED.map((_, i) => i + 1));
    expect(new Set(errors.map((e) => e.message)).size).toBeGreaterThanOrEqual(10);
    const messages = c.messages();
    // Every assistant message with tool calls is answered by a tool message per call id.
    messages.forEach((m, i) => {
      if (m.role !== 'assistant' || !m.tool_calls) return;
      const ids = m.tool_calls.map((t) => t.id);
      const answers = messages.slice(i + 1, i + 1 + ids.length);
      expect(answers.map((a) => a.role)).toEqual(ids.map(() => 'tool'));
      expect(answers.map((a) => a.tool_call_id)).toEqual(ids);
      expect(String(answers[0].content)).toMatch(/could not be used/);
    });
    const userObservations = messages.filter(
      (m) => m.role === 'user' && String(m.content).startsWith('Your last output could not be used'),
    );
    expect(userObservations).toHaveLength(4);
    const rewards = ofType(c.history(), 'reward').filter((r) => !r.final);
    expect(rewards.slice(0, MALFORMED.length).every((r) => r.components.format_valid === 0)).toBe(true);
    expect(c.ended()).toMatchObject({ end_reason: 'final_answer', steps: MALFORMED.length + 1 });
    await c.dispose();
  });
});
