import { describe, expect, it } from 'vitest';
import { UsageError } from '../../electron/cli/command.js';
import { intFlag, numberFlag } from '../../electron/cli/number-flags.js';

describe('the CLI number-flag parser', () => {
  it('returns undefined for an absent flag and the number for a good one', () => {
    expect(intFlag('at', undefined)).toBeUndefined();
    expect(intFlag('at', '0')).toBe(0);
    expect(intFlag('port', '65535', { min: 0, max: 65535 })).toBe(65535);
    expect(numberFlag('temperature', '-0.5')).toBe(-0.5);
    expect(numberFlag('timeout', '2.5', { positive: true, unit: 'seconds' })).toBe(2.5);
  });

  it('refuses a bad value with one wording: the flag, the value and what it must be', () => {
    const cases: [() => unknown, string][] = [
      [() => intFlag('at', '-1'), '--at: "-1" is not a non-negative integer'],
      [() => intFlag('at', '1.5'), '--at: "1.5" is not a non-negative integer'],
      [() => intFlag('at', ''), '--at: "" is not a non-negative integer'],
      [() => intFlag('limit', '0', { min: 1 }), '--limit: "0" is not a positive integer'],
      [() => intFlag('limit', 'ten', { min: 1 }), '--limit: "ten" is not a positive integer'],
      [
        () => intFlag('port', '70000', { min: 0, max: 65535 }),
        '--port: "70000" is not an integer from 0 to 65535',
      ],
      [() => numberFlag('temperature', 'hot'), '--temperature: "hot" is not a number'],
      [() => numberFlag('temperature', 'Infinity'), '--temperature: "Infinity" is not a number'],
      [
        () => numberFlag('min-quality', '1.5', { min: 0, max: 1 }),
        '--min-quality: "1.5" is not a number from 0 to 1',
      ],
      [
        () => numberFlag('timeout', '0', { positive: true, unit: 'seconds' }),
        '--timeout: "0" is not a positive number of seconds',
      ],
    ];
    for (const [parse, message] of cases) {
      expect(parse, message).toThrow(UsageError);
      expect(parse).toThrow(message);
    }
  });
});
