import { describe, expect, it } from 'vitest';
import { UsageError } from '../../electron/cli/command.js';
import { parseOneArg } from '../../electron/cli/parse-or-usage.js';

describe('one argument set-up for the commands that take one argument', () => {
  const options = { json: { type: 'boolean', default: false }, out: { type: 'string' } } as const;

  it('gives the flags typed and the one argument', () => {
    const { values, arg } = parseOneArg(['x', '--out', 'f.json'], options, 'case NAME');
    expect(arg).toBe('x');
    expect(values).toEqual({ json: false, out: 'f.json' });
  });

  it('none, two, or an unknown flag are usage errors naming what to give', () => {
    for (const argv of [[], ['a', 'b']]) {
      expect(() => parseOneArg(argv, options, 'case NAME (stepbox case list shows them)')).toThrow(
        new UsageError('expected one case NAME (stepbox case list shows them)'),
      );
    }
    expect(() => parseOneArg(['a', '--nope'], options, 'case NAME')).toThrow(UsageError);
  });
});
