import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

// The files a person receives (a cloned task, a shared case, a trace) as an attacker writes
// them: the built CLI refuses each with exit 2 and a message naming the field and the fix.

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'stepbox-hostile-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(rel: string, text: string): string {
  mkdirSync(join(dir, rel, '..'), { recursive: true });
  writeFileSync(join(dir, rel), text);
  return join(dir, rel);
}

describe('the CLI on hostile inputs', () => {
  it('run: a task.json naming a folder or a build context outside its folder exits 2, naming the field', async () => {
    const home = join(dir, 'home');
    const env = { STEPBOX_HOME: home, STEPBOX_LOG: 'error' };
    write('task/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: '/etc' } }));
    const from = await runCli(['run', join(dir, 'task'), '--agent', 'manual'], { env });
    expect(from.code, from.stderr).toBe(2);
    expect(from.stderr).toContain(
      `${join(dir, 'task/task.json')}: workspace.from "/etc" is /etc, outside ${join(dir, 'task')}: stepbox reads nothing of this machine`,
    );
    expect(from.stderr).toMatch(/run that folder itself: stepbox run DIR --goal/);
    write('task/task.json', JSON.stringify({ name: 't', goal: 'g', sandbox: { build: '../../..' } }));
    const build = await runCli(['run', join(dir, 'task'), '--agent', 'manual'], { env });
    expect(build.code, build.stderr).toBe(2);
    expect(build.stderr).toMatch(/task\.json: sandbox\.build "\.\.\/\.\.\/\.\." is \/\S*, outside /);
    expect(build.stderr).toMatch(/build the image yourself \(docker build -t NAME PATH\)/);
  });
});
