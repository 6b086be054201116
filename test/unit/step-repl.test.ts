import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LineReader, stepRepl } from '../../electron/cli/step-repl.js';
import type { CliIo } from '../../electron/cli/command.js';
import { call, final, memoryTask, startScripted, tempHome } from '../support/harness.js';

// The `--step` prompt driven as a person drives it, on the memory sandbox: the keys are lines
// of stdin, what it says goes to stderr.

/** Runs the prompt over `keys` (stdin then closed): what it wrote to stderr and how the episode ended. */
async function stepWith(keys: string) {
  const env = tempHome();
  const c = await startScripted(env, { task: memoryTask() }, [
    call('execute_shell', { command: 'echo one' }),
    call('execute_shell', { command: 'echo two' }),
    call('execute_shell', { command: 'echo done > done.txt' }),
    final('done'),
  ]);
  const stdin = new PassThrough();
  const stderr = new PassThrough();
  let said = '';
  stderr.on('data', (d: Buffer) => (said += d.toString('utf8')));
  const io: CliIo = { stdin, stdout: new PassThrough(), stderr, env: {} };
  stdin.end(keys);
  const reader = new LineReader(io);
  try {
    await stepRepl(c, io, reader);
    return { said, end: c.ended(), branch: c.branch };
  } finally {
    reader.close();
    await c.dispose();
    env.cleanup();
  }
}

describe('the --step prompt', () => {
  it('r K says what the rollback dropped, in the window’s words; nothing when it dropped nothing', async () => {
    // Two steps, a message injected after step 2, back to step 1 (the message is not in that
    // branch), forward one step, back to step 1 again (nothing of a person's after it now).
    const { said } = await stepWith('\n\ni\nuser\nremember the umbrella\nr 1\n\nr 1\nq\n');
    const rollbacks = said.split('rolled back to step 1').slice(1);
    expect(rollbacks).toHaveLength(2);
    expect(rollbacks[0]).toMatch(
      /^; continuing creates a new branch\nDropped: 1 message injected after step 2\. Redo what the next step needs\.\n/,
    );
    expect(rollbacks[1]).toMatch(/^; continuing creates a new branch\n\[step 1\]/);
    expect(said.match(/Dropped:/g)).toHaveLength(1);
  });

  it('the end of input stops the episode, saying so and how to run without stepping', async () => {
    const { said, end, branch } = await stepWith('\n');
    // The resume it names is this episode's, ready to paste.
    expect(said).toContain(
      `stepbox: input ended (stdin closed), so no one is left to answer: the episode stops before step 2; its trace keeps the steps so far and closes as interrupted (input_ended). --step waits for a person at every step: to run without stepping, leave out --step (\`stepbox resume ${branch}\`, without --step, continues this one to its end)`,
    );
    expect(end).toMatchObject({ status: 'interrupted', end_reason: 'input_ended' });
  });
});
