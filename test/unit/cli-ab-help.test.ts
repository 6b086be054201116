import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { command } from '../../electron/cli/ab.js';
import { AbConfig, taskUnder } from '../../electron/engine/batch/ab.js';
import { PROJECT_ROOT } from '../support/cli.js';

describe('stepbox ab --help', () => {
  it('its example compares two configurations that differ on its task', () => {
    const help = command.help.slice(command.help.indexOf('Example'));
    const configs = new Map(
      [...help.matchAll(/echo '(\{.*?\})' > (\S+?\.json)/g)].map((m) => [
        m[2],
        AbConfig.parse(JSON.parse(m[1])),
      ]),
    );
    const run = /stepbox ab --a (\S+) --b (\S+) (\S+)/.exec(help);
    expect(run, help).not.toBeNull();
    const [, a, b, taskDir] = run!;
    expect([...configs.keys()].sort()).toEqual([a, b].sort());
    const doc = JSON.parse(readFileSync(join(PROJECT_ROOT, taskDir, 'task.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const taskA = taskUnder(doc, configs.get(a)!, 'A');
    const taskB = taskUnder(doc, configs.get(b)!, 'B');
    expect(taskB).not.toEqual(taskA);
  });
});
