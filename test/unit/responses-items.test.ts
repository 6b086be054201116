import { describe, expect, it } from 'vitest';
import { chatFromResponsesRequest } from '../../electron/engine/model-api/responses-api.js';

// Every rule reads a recorded request's messages: an item the conversion drops is a result QA
// thinks the model never saw (Codex's freeform apply_patch is a custom tool).
describe('Responses input items become the messages QA and replay read', () => {
  it('keeps function and custom (freeform) tool calls and their outputs', () => {
    const chat = chatFromResponsesRequest({
      model: 'm',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix it' }] },
        { type: 'function_call', call_id: 'a', name: 'exec_command', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'a', output: 'x.py\n' },
        { type: 'custom_tool_call', call_id: 'b', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'b', output: 'Success.' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'fix it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'x.py\n' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'b',
            type: 'function',
            function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'b', content: 'Success.' },
    ]);
  });
});
