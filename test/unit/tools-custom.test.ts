import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseCommandTemplate } from '../../shared/command-template.js';
import { fillTemplate, memoryValuesFrom } from '../../electron/engine/tools/custom-tool.js';
import { createToolRegistry } from '../../electron/engine/tools/registry.js';
import { shellJoin, shellQuote } from '../../electron/engine/tools/shell-quote.js';
import { memoryContext, testTask } from '../support/tools-fixtures.js';

const NASTY = [
  "it's",
  'two words',
  '$(touch /tmp/stepbox-pwned)',
  '`id`',
  'a\nb',
  '"; rm -rf / #',
  '*',
  '~',
  '',
  "'",
  '\\n',
  '$HOME',
];

describe('shell quoting', () => {
  it('reaches a real shell as the exact bytes, with nothing interpreted', () => {
    for (const word of NASTY) {
      const out = execFileSync('/bin/sh', ['-c', `printf '%s' ${shellQuote(word)}`], { encoding: 'utf8' });
      expect(out).toBe(word);
    }
    const argv = execFileSync('/bin/sh', ['-c', `printf '[%s]' ${shellJoin(NASTY)}`], { encoding: 'utf8' });
    expect(argv).toBe(NASTY.map((w) => `[${w}]`).join(''));
  });

  it('leaves plain words bare and quotes the rest', () => {
    expect(shellQuote('file.txt')).toBe('file.txt');
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe("''");
  });
});

describe('custom tools', () => {
  it('fills only declared placeholders, shell-quoted, and leaves other braces alone', () => {
    const fill = (template: string, args: Record<string, unknown>, declared: string[]) => {
      const parsed = parseCommandTemplate(template, declared);
      if (!parsed.ok) throw new Error(parsed.message);
      return fillTemplate(parsed.parts, args);
    };
    const cmd = fill("grep {q} f | awk '{print $1}' ${HOME} {other}", { q: 'a b' }, ['q']);
    expect(cmd).toBe("grep 'a b' f | awk '{print $1}' ${HOME} {other}");
    expect(fill('echo {n} {flag} {missing}', { n: 3, flag: true }, ['n', 'flag', 'missing'])).toBe(
      "echo 3 true ''",
    );
  });

  it('passes quotes, spaces, $() and newlines to the command literally', async () => {
    const task = testTask({
      tools: [
        {
          name: 'say',
          command: 'echo {text}',
          parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
      ],
    });
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    for (const text of ['it\'s "quoted"', '$(touch pwned) `id` ; false', 'line1\nline2']) {
      const out = await tools.call('say', { text }, ctx);
      expect(out.result).toMatchObject({ ok: true, exit_code: 0, stdout: `${text}\n` });
    }
    expect((await ctx.sandbox.readFile('pwned')).ok).toBe(false);
  });

  it('validates arguments against the JSON Schema: required and primitive types', async () => {
    const task = testTask({
      tools: [
        {
          name: 'lookup',
          command: 'echo {query} {limit}',
          parameters: {
            type: 'object',
            properties: { query: { type: 'string' }, limit: { type: 'integer' }, mode: { enum: ['a', 'b'] } },
            required: ['query'],
            additionalProperties: false,
          },
        },
      ],
    });
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    const missing = await tools.call('lookup', {}, ctx);
    expect(missing.result.error).toEqual({
      code: 'invalid_arguments',
      message: 'lookup: "query" is missing: give it a string',
    });
    const wrong = await tools.call('lookup', { query: 'x', limit: 1.5, mode: 'c', extra: 1 }, ctx);
    expect(wrong.result.error?.message).toContain('"limit" must be an integer, not a number');
    expect(wrong.result.error?.message).toContain('"mode" must be one of "a", "b"');
    expect(wrong.result.error?.message).toContain('"extra" is not an argument');
    expect((await tools.call('lookup', { query: 'x', limit: 2 }, ctx)).result.stdout).toBe('x 2\n');
  });

  it('runs in a fresh shell at /workspace, not in the agent session', async () => {
    const task = testTask({ tools: ['execute_shell', { name: 'where', command: 'pwd' }] });
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    await tools.call('execute_shell', { command: 'cd /tmp' }, ctx);
    expect((await tools.call('where', {}, ctx)).result.stdout).toBe('/workspace\n');
  });

  it('writes memory from stdout through JSON pointers, with the tool as writer', async () => {
    const task = testTask({
      tools: [
        {
          name: 'weather',
          command: `echo '{"result": {"temp": 21, "sky": "rain"}, "a/b": [1, 2]}'`,
          writes_memory: { temp: '/result/temp', slash: '/a~1b/1', all: '', gone: '/nope' },
          fallback: 'weather service unavailable',
        },
      ],
      memory: { initial: { temp: 5 } },
    });
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    const out = await tools.call('weather', {}, ctx);
    expect(out.memoryWrites).toEqual([
      { key: 'temp', before: 5, after: 21, writer: 'weather' },
      { key: 'slash', before: null, after: 2, writer: 'weather' },
      {
        key: 'all',
        before: null,
        after: { result: { temp: 21, sky: 'rain' }, 'a/b': [1, 2] },
        writer: 'weather',
      },
    ]);
    expect(out.result.data).toEqual({ memory_skipped: ['gone'] });
    expect(ctx.memory.get('temp')).toBe(21);
    expect(tools.fallbackFor('weather')).toBe('weather service unavailable');
    expect(tools.fallbackFor('execute_shell')).toBeUndefined();
  });

  it('takes the whole stdout as a string for pointer "" when stdout is not JSON, and skips failed runs', () => {
    expect(memoryValuesFrom({ v: '', w: '/x' }, 'None\n')).toEqual({
      values: [{ key: 'v', value: 'None' }],
      skipped: ['w'],
    });
  });

  it('writes no memory when the command exits non-zero', async () => {
    const task = testTask({ tools: [{ name: 'bad', command: 'echo 1; false', writes_memory: { v: '' } }] });
    const out = await createToolRegistry(task).call('bad', {}, await memoryContext(task));
    expect(out.result.exit_code).toBe(1);
    expect(out.memoryWrites).toEqual([]);
  });
});
