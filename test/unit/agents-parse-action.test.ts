import { describe, expect, it } from 'vitest';
import { parseAction } from '../../electron/engine/agents/parse-action.js';
import { builtinToolDefinition } from '../../shared/tool-schemas.js';

const tools = [
  builtinToolDefinition('execute_shell'),
  builtinToolDefinition('write_file'),
  builtinToolDefinition('memory_write'),
];
const tc = (name: unknown, args: unknown, id = 'c1') => ({
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
});

describe('parseAction', () => {
  it('takes structured tool calls (string or object arguments)', () => {
    const a = parseAction(tc('execute_shell', '{"command":"ls"}'), tools, 1);
    expect(a).toMatchObject({
      kind: 'calls',
      via: 'tool_calls',
      calls: [{ id: 'c1', name: 'execute_shell', arguments: { command: 'ls' } }],
    });
  });

  it('takes a JSON tool call written as text, fenced or bare, with name/tool/function keys', () => {
    expect(
      parseAction({ content: '{"name":"execute_shell","arguments":{"command":"ls"}}' }, tools, 2),
    ).toMatchObject({ kind: 'calls', via: 'text', calls: [{ id: 'call_2_1', name: 'execute_shell' }] });
    expect(
      parseAction(
        { content: 'Running:\n```json\n{"tool":"execute_shell","args":{"command":"pwd"}}\n```' },
        tools,
        2,
      ),
    ).toMatchObject({ kind: 'calls', calls: [{ arguments: { command: 'pwd' } }] });
    expect(
      parseAction(
        { content: '{"function":{"name":"execute_shell","arguments":"{\\"command\\":\\"id\\"}"}}' },
        tools,
        2,
      ),
    ).toMatchObject({ kind: 'calls', calls: [{ arguments: { command: 'id' } }] });
  });

  it('treats other text as the final answer', () => {
    expect(parseAction({ content: 'All done: the tests pass.' }, tools, 3)).toEqual({
      kind: 'final',
      text: 'All done: the tests pass.',
    });
  });

  // Each malformed output must become a parse error whose message says what was wrong.
  const malformed: [string, { content: string | null; tool_calls?: unknown }, RegExp][] = [
    ['empty message', { content: null }, /empty/],
    ['whitespace only', { content: '   \n ' }, /empty/],
    ['arguments not JSON', tc('execute_shell', '{"command": ls}'), /not valid JSON/],
    [
      'arguments a JSON array',
      tc('execute_shell', '["ls"]'),
      /arguments: expected a JSON object, got an array/,
    ],
    ['unknown tool', tc('delete_everything', '{}'), /not an enabled tool/],
    ['missing tool name', tc(undefined, '{}'), /no tool name/],
    ['missing required argument', tc('execute_shell', '{}'), /"command" is missing: give it a string/],
    [
      'wrong argument type',
      tc('execute_shell', '{"command": 42}'),
      /"command" must be a string, not a number/,
    ],
    [
      'unexpected argument',
      tc('execute_shell', '{"command":"ls","sudo":true}'),
      /"sudo" is not an argument \(it takes command, timeout\)/,
    ],
    ['tool_calls not an array', { content: null, tool_calls: { name: 'x' } }, /must be an array/],
    [
      'tool call without function',
      { content: null, tool_calls: [{ id: 'x', type: 'function' }] },
      /no "function" object/,
    ],
    ['fenced block that is not JSON', { content: '```bash\nls -la\n```' }, /not valid JSON/],
    [
      'truncated JSON call in text',
      { content: '{"name": "execute_shell", "arguments": {"command": "ls"' },
      /not valid JSON/,
    ],
    [
      'text call to an unknown tool',
      { content: '{"name": "browse", "arguments": {}}' },
      /"browse" is not an enabled tool/,
    ],
    ['text call with a non-object', { content: '```json\n[1, 2]\n```' }, /must be a JSON object/],
    [
      'bad enum value',
      tc('write_file', '{"path":"a","content":"b","encoding":"latin1"}'),
      /"encoding" must be one of "utf8", "base64"/,
    ],
  ];
  for (const [kind, output, message] of malformed) {
    it(`malformed: ${kind} → parse error`, () => {
      const a = parseAction(output, tools, 4);
      expect(a.kind).toBe('parse_error');
      if (a.kind === 'parse_error') expect(a.message).toMatch(message);
    });
  }

  it('names a refused structured call as a person counts it, never `tool_calls[0]` (the window shows these words)', () => {
    const a = parseAction(
      {
        content: null,
        tool_calls: [
          ...tc('execute_shell', '{"command":"ls"}').tool_calls,
          ...tc('run_tests', '{}', 'c2').tool_calls,
        ],
      },
      tools,
      1,
    );
    expect(a.kind === 'parse_error' && a.message).toBe(
      'tool call 2: "run_tests" is not an enabled tool (enabled: ' +
        tools.map((t) => t.function.name).join(', ') +
        ')',
    );
  });

  it('answers every structured call id of a bad output', () => {
    const a = parseAction(
      {
        content: null,
        tool_calls: [
          { id: 'a', function: { name: 'execute_shell', arguments: '{}' } },
          { id: 'b', function: { name: 'execute_shell', arguments: '{"command":"ls"}' } },
        ],
      },
      tools,
      5,
    );
    expect(a).toMatchObject({ kind: 'parse_error', callIds: ['a', 'b'] });
  });
});
