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

  it('run and task init: 50,000 unknown keys print 20 of them and a count, not 50,000 lines', async () => {
    const env = { STEPBOX_HOME: join(dir, 'home'), STEPBOX_LOG: 'error' };
    const keys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
    write('t/task.json', JSON.stringify({ name: 't', goal: 'g', ...keys }));
    const run = await runCli(['run', join(dir, 't'), '--agent', 'manual'], { env });
    expect(run.code, run.stderr.slice(0, 2000)).toBe(2);
    expect(run.stderr.split('\n').length).toBeLessThan(30);
    expect(run.stderr).toContain('  k19: unknown key (allowed: name, goal,');
    expect(run.stderr).toContain('  and 49980 more problems');
    const file = write('dc/.devcontainer/devcontainer.json', JSON.stringify({ image: 'node:20', ...keys }));
    const init = await runCli(['task', 'init', join(dir, 'dc'), '--goal', 'g'], { env });
    expect(init.code, init.stderr.slice(0, 2000)).toBe(0);
    expect(init.stderr.split('\n').length).toBeLessThan(30);
    expect(init.stderr).toContain(`warning: ${file}: and 49980 more unknown keys`);
  });
});
