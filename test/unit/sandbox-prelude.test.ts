import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSandboxProgram, programParts } from '../../electron/engine/sandbox/sandbox-resources.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { SECURE_EXEC_DROPS, TERMINAL_LAUNCHER } from '../../electron/engine/docker/terminal.js';
import { RUNTIME_SETPRIV, SEAL_GID, runtimeProgram } from '../../electron/engine/sandbox/sandbox-runtime.js';

// Item 10 of issue 31: one privilege drop for the three programs stepbox runs as root in the
// sandbox (helper.py, bridge.py, verifier.py), in resources/sandbox/prelude.py, sent ahead of
// each. The bridge once dropped its own way (no bounding set cleared, its channel fds still
// open when it became the agent).

const DIR = resolve(PROJECT_ROOT, 'resources/sandbox');
const PROGRAMS = ['helper.py', 'bridge.py', 'verifier.py'] as const;
/** Calls that change a process's ids, groups or capabilities for good (a temporary seteuid is not one). */
const OWN_DROP =
  /\bos\.(setresuid|setresgid|setuid|setgid|setgroups)\(|prctl\(24\b|--bounding-set|--reuid|--regid/;

describe('one privilege drop for the programs inside the sandbox (prelude.py)', () => {
  for (const name of PROGRAMS) {
    it(`${name}: sent with the prelude ahead of it, drops privileges only through it`, () => {
      const own = readFileSync(resolve(DIR, name), 'utf8');
      const parts = programParts(name);
      expect(parts[0]).toBe('prelude.py');
      // The program and its parts (the helper's), everything but the prelude.
      const mine = [own, ...parts.slice(1).map((p) => readFileSync(resolve(DIR, p), 'utf8'))].join('\n');
      const drops = mine.split('\n').filter((l) => OWN_DROP.test(l));
      expect(
        drops.map((l) => l.trim()),
        name,
      ).toEqual([]);
      expect(mine).toMatch(/\bbecome\(|setpriv_prefix\(/);
      const sent = loadSandboxProgram(name).toString('utf8');
      // Its own first line (its name, for `ps`), then the prelude and its parts, then the program.
      const firstLine = own.slice(0, own.indexOf('\n') + 1);
      const ahead = parts.map((p) => readFileSync(resolve(DIR, p), 'utf8') + '\n').join('');
      expect(sent).toBe(firstLine + ahead + own);
    });
  }

  it('the prelude defines only (nothing runs at import) and its setpriv prefix is become() in setpriv words', () => {
    const script = [
      'import importlib.util, json, sys',
      `spec = importlib.util.spec_from_file_location('prelude', ${JSON.stringify(resolve(DIR, 'prelude.py'))})`,
      'p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)',
      'print(json.dumps([p.setpriv_prefix("/usr/bin/setpriv", 1000, 1000, None, True), p.setpriv_prefix("/usr/bin/setpriv", 1000, 1000, 65534, False)]))',
    ].join('\n');
    const r = spawnSync('python3', ['-I', '-c', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([
      ['/usr/bin/setpriv', '--bounding-set=-all', '--reuid=1000', '--regid=1000', '--clear-groups', '--'],
      ['/usr/bin/setpriv', '--reuid=1000', '--rgid=1000', '--egid=65534', '--clear-groups', '--'],
    ]);
  });

  it("the window's terminal drops as the prelude does (sealed), and restores what a secure exec drops as the helper does", () => {
    const script = [
      'import importlib.util, json',
      `spec = importlib.util.spec_from_file_location('prelude', ${JSON.stringify(resolve(DIR, 'prelude.py'))})`,
      'p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)',
      'print(json.dumps([p.SEAL_GID, p.setpriv_prefix("SETPRIV", p.AGENT_UID, p.AGENT_UID, p.SEAL_GID, True)]))',
    ].join('\n');
    const r = spawnSync('python3', ['-I', '-c', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const [sealGid, prefix] = JSON.parse(r.stdout) as [number, string[]];
    expect(SEAL_GID).toBe(sealGid);
    // The prelude's words, the bounding set where root's exec may empty it (CAP_SETPCAP).
    const words = prefix.slice(1).map((w) => (w === '--bounding-set=-all' ? '"${bnd[@]}"' : w));
    expect(TERMINAL_LAUNCHER).toContain(
      `exec ${runtimeProgram(RUNTIME_SETPRIV).join(' ')} ${words.join(' ')} "$b" "$@"`,
    );
    const helper = readFileSync(resolve(DIR, 'helper_identity.py'), 'utf8');
    const drops = /SECURE_EXEC_DROPS = \(([^)]*)\)/
      .exec(helper)![1]!
      .match(/'[A-Z_]+'/g)!
      .map((q) => q.slice(1, -1));
    expect(SECURE_EXEC_DROPS.split(' ').sort()).toEqual(
      drops.filter((d) => !/^(SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE)$/.test(d)).sort(),
    );
  });
});
