// One validator for tool arguments (ajv, a full JSON Schema implementation): every
// keyword a task writes is enforced, and the same bad call gets the same message from
// the model parser (a parse error) and from the tool registry (invalid_arguments).
import { describe, expect, it } from 'vitest';
import { parseAction } from '../../electron/engine/agents/parse-action.js';
import { argumentCheck, SchemaError } from '../../electron/engine/tools/argument-validator.js';
import { createToolRegistry } from '../../electron/engine/tools/registry.js';
import { memoryContext, testTask } from '../support/tools-fixtures.js';

const SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 2, maxLength: 20, pattern: '^[A-Z][a-z]+$' },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    ratio: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.5 },
    unit: { enum: ['c', 'f'] },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2, uniqueItems: true },
    when: {
      type: 'object',
      properties: { hour: { type: 'integer' } },
      required: ['hour'],
      additionalProperties: false,
    },
    mode: { const: 'fast' },
    either: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
  },
  required: ['city'],
  additionalProperties: false,
} as const;

/** Each keyword, by a call that breaks only it, and the message part naming it. */
const BREAKS: [string, Record<string, unknown>, RegExp][] = [
  ['required', {}, /"city" is missing: give it a string/],
  ['type', { city: 42 }, /"city" must be a string, not a number/],
  ['minLength', { city: 'A' }, /"city" must be at least 2 characters/],
  ['maxLength', { city: 'A' + 'a'.repeat(30) }, /"city" must be at most 20 characters/],
  ['pattern', { city: 'beijing' }, /"city" must match the pattern \^\[A-Z\]\[a-z\]\+\$/],
  ['minimum', { city: 'Rome', days: 0 }, /"days" must be at least 1/],
  ['maximum', { city: 'Rome', days: 8 }, /"days" must be at most 7/],
  ['integer', { city: 'Rome', days: 1.5 }, /"days" must be an integer, not a number/],
  ['exclusiveMinimum', { city: 'Rome', ratio: 0 }, /"ratio" must be more than 0/],
  ['multipleOf', { city: 'Rome', ratio: 0.3 }, /"ratio" must be a multiple of 0.5/],
  ['enum', { city: 'Rome', unit: 'k' }, /"unit" must be one of "c", "f"/],
  ['items', { city: 'Rome', tags: ['a', 1] }, /"tags\[1\]" must be a string, not a number/],
  ['maxItems', { city: 'Rome', tags: ['a', 'b', 'c'] }, /"tags" must have at most 2 items/],
  ['uniqueItems', { city: 'Rome', tags: ['a', 'a'] }, /"tags" must not hold the same item twice/],
  ['nested required', { city: 'Rome', when: {} }, /"when\.hour" is missing: give it an integer/],
  [
    'nested additionalProperties',
    { city: 'Rome', when: { hour: 1, min: 2 } },
    /"when\.min" is not an argument \(it takes hour\)/,
  ],
  ['const', { city: 'Rome', mode: 'slow' }, /"mode" must be "fast"/],
  ['oneOf', { city: 'Rome', either: true }, /"either" does not fit any form it may take/],
  [
    'additionalProperties',
    { city: 'Rome', cty: 'x' },
    /"cty" is not an argument — did you mean "city"\? \(it takes city, days/,
  ],
];

function task() {
  return testTask({
    tools: [
      { name: 'weather', command: 'echo {city}', parameters: SCHEMA as unknown as Record<string, unknown> },
    ],
  });
}

describe('argument validator', () => {
  it('enforces every JSON Schema keyword, with one message per broken keyword', () => {
    const check = argumentCheck('weather', SCHEMA as unknown as Record<string, unknown>);
    for (const [keyword, args, message] of BREAKS) {
      const r = check(args);
      expect(r.ok, keyword).toBe(false);
      if (!r.ok) expect(r.error, keyword).toMatch(message);
    }
    expect(
      check({
        city: 'Rome',
        days: 3,
        ratio: 1.5,
        unit: 'c',
        tags: ['a'],
        when: { hour: 9 },
        mode: 'fast',
        either: 2,
      }).ok,
    ).toBe(true);
  });

  it('gives the parser and the registry the same message for the same bad call', async () => {
    const t = task();
    const tools = createToolRegistry(t);
    const ctx = await memoryContext(t);
    for (const [keyword, args] of BREAKS) {
      const viaRegistry = (await tools.call('weather', args, ctx)).result.error;
      expect(viaRegistry?.code, keyword).toBe('invalid_arguments');
      const parsed = parseAction(
        {
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'weather', arguments: JSON.stringify(args) } },
          ],
        },
        tools.definitions(),
        1,
      );
      expect(parsed.kind, keyword).toBe('parse_error');
      const parserMessage = (parsed as { message: string }).message;
      // Registry: "weather: <problems>"; parser: "tool call 1 (weather): <problems>".
      expect(parserMessage.endsWith(viaRegistry!.message.slice('weather: '.length)), keyword).toBe(true);
    }
    // Arguments that are not a JSON object at all read the same on both paths too.
    for (const raw of ['["ls"]', '{"city": Paris}', '42']) {
      const viaRegistry = (await tools.call('weather', raw, ctx)).result.error;
      expect(viaRegistry?.code, raw).toBe('invalid_arguments');
      const parsed = parseAction(
        {
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: raw } }],
        },
        tools.definitions(),
        1,
      );
      expect((parsed as { message: string }).message, raw).toBe(
        `tool call 1 (weather): ${viaRegistry!.message.slice('weather: '.length)}`,
      );
    }
  });

  it('built-in tools are checked by the same validator (minLength, exclusiveMinimum)', async () => {
    const t = testTask({});
    const tools = createToolRegistry(t);
    const ctx = await memoryContext(t);
    expect((await tools.call('execute_shell', { command: '' }, ctx)).result.error?.message).toBe(
      'execute_shell: "command" must not be empty',
    );
    expect(
      (await tools.call('execute_shell', { command: 'ls', timeout: -1 }, ctx)).result.error?.message,
    ).toBe('execute_shell: "timeout" must be more than 0');
  });

  it('refuses a schema that is not JSON Schema, naming the tool', () => {
    expect(() => argumentCheck('bad', { type: 'strng' })).toThrow(SchemaError);
    expect(() => argumentCheck('bad', { type: 'strng' })).toThrow(
      /tool "bad": its parameters are not a valid JSON Schema/,
    );
  });
});
