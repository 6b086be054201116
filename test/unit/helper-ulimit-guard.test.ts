import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

const HELPER = resolve(PROJECT_ROOT, 'resources/sandbox/helper.py');

/**
 * Runs `before` then the helper's ulimit guard then `after` in one bash (the guard's fd 3 on
 * its stdout, as a call's state pipe), the way a call's shell runs them on gVisor, where the
 * helper cannot read another process's limits (no /proc/PID/limits). As an unprivileged
 * user (root could raise a lowered hard limit again).
 */
function guarded(before: string, after: string): { stdout: string; status: number | null } {
  const script = [
    'import importlib.util, os, subprocess, sys',
    `spec = importlib.util.spec_from_file_location('helper', ${JSON.stringify(HELPER)})`,
    'h = importlib.util.module_from_spec(spec)',
    'spec.loader.exec_module(h)',
    'guard = h.ulimit_guard()',
    `r = subprocess.run(([] if os.getuid() else ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--']) + ['bash', '-c', ${JSON.stringify(before)} + '\\n' + guard + ${JSON.stringify(after)} + ' 3>&1'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(), stdin=subprocess.DEVNULL)`,
    'sys.stdout.write(r.stdout.decode())',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  return { stdout: r.stdout, status: r.status };
}

// On gVisor a call's shell checks its own limits before it takes the command (helper.py
// ulimit_guard): a process of the agent's may have lowered them with prlimit.
describe("the helper's ulimit guard (resources/sandbox/helper.py)", () => {
  it("lets a shell with the helper's limits run its command, limits unchanged", () => {
    const plain = guarded('exec 3>&1', 'ulimit -Hn; ulimit -Sn');
    const base = spawnSync('bash', ['-c', 'ulimit -Hn; ulimit -Sn'], { encoding: 'utf8' }).stdout;
    expect(plain.stdout).toBe(base);
  });

  it("sets a lowered soft limit back to the helper's", () => {
    const base = spawnSync('bash', ['-c', 'ulimit -Sn'], { encoding: 'utf8' }).stdout;
    expect(guarded('exec 3>&1; ulimit -Sn 64', 'ulimit -Sn').stdout).toBe(base);
  });

  it('says L and runs nothing when a hard limit was lowered', () => {
    const r = guarded('exec 3>&1; ulimit -n 64', 'echo ran');
    expect(r.stdout).toBe('L');
    expect(r.status).toBe(0);
  });
});
