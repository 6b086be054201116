import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLongTrace } from '../../electron/bench/ui-trace';
import { cliBuildProblem, PROJECT_ROOT, runCli } from '../support/cli';

/**
 * Runs the CLI with its stdout a pipe whose reader is already gone (as `stepbox show EP | head`
 * once head has its lines): every write fails with EPIPE. Returns its exit and its stderr.
 */
function withReaderGone(
  args: readonly string[],
  home: string,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/stepbox.js', ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, STEPBOX_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Closed before the child's first write (its start alone takes longer than this line).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('the CLI when the reader of its output goes away', () => {
  let home: string;
  let branch: string;
  beforeAll(async () => {
    const problem = cliBuildProblem();
    if (problem) throw new Error(problem);
    home = await mkdtemp(join(tmpdir(), 'stepbox-pipe-'));
    branch = (await writeLongTrace(home, 300)).branch;
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('stops writing quietly: no stack, no EPIPE, the command’s own exit (show, list, show --json)', async () => {
    for (const args of [['show', branch], ['list'], ['show', branch, '--json']]) {
      const run = await withReaderGone(args, home);
      // On the old CLI: "Error: write EPIPE" with its stack on stderr, exit 1.
      expect(run.stderr, args.join(' ')).not.toMatch(/EPIPE|Error:|at .*\.js:\d+/);
      expect(run.code, args.join(' ')).toBe(0);
    }
    // A wrong name still says so, and exits as it always did.
    const wrong = await withReaderGone(['show', 'no-such-episode'], home);
    expect(wrong.stderr).toMatch(/no episode or branch matches "no-such-episode"/);
    expect(wrong.code).toBe(2);
    // The store is untouched: the episode still reads whole.
    const shown = await runCli(['show', branch, '--json'], { env: { STEPBOX_HOME: home } });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ branch });
  });
});
