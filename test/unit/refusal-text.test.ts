import { describe, expect, it } from 'vitest';
import { refusalText } from '../../shared/step-summary';

/** The inspector's line for a step whose call the parser refused: it read "…the call was refused: tool call 1: …". */
describe('a refused call in words', () => {
  it('says what became of the step, then the parser’s words as a sentence: no "refused: tool call 1:"', () => {
    expect(refusalText('tool call 1: "run_tests" is not an enabled tool (enabled: execute_shell)')).toBe(
      'Unknown tool, so the call was refused. Tool call 1: "run_tests" is not an enabled tool (enabled: execute_shell)',
    );
    expect(refusalText('tool call 1: arguments are not valid JSON')).toBe(
      'Parse error, so nothing ran. Tool call 1: arguments are not valid JSON',
    );
  });
});
