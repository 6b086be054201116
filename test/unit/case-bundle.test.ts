import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportCase, importCase } from '../../electron/engine/cases/case-bundle.js';
import { loadCase } from '../../electron/engine/cases/case-library.js';
import { runCase, type CaseEnv } from '../../electron/engine/cases/case-runner.js';
import { engineError, isInputError } from '../../electron/engine/engine-error.js';
import { runCli } from '../support/cli.js';

describe('case bundles (case export / case import)', () => {
  it('round-trips a bundled case into a library', () => {
    const library = mkdtempSync(join(tmpdir(), 'stepbox-lib-'));
    const bundle = exportCase('output-flood');
    expect(Object.keys(bundle.files)).toEqual(
      expect.arrayContaining(['task.json', 'agent.jsonl', 'expected.json', 'README.md', 'fixed/agent.jsonl']),
    );
    const done = importCase(bundle, { library, name: 'flood-copy' });
    expect(done.dir).toBe(join(library, 'flood-copy'));
    expect(existsSync(join(library, 'flood-copy', 'fixed', 'agent.jsonl'))).toBe(true);
    expect(() => importCase(bundle, { library, name: 'flood-copy' })).toThrow(/already exists.*--force/);
  });
  it('refuses a path that leaves the case folder, and a case that does not load', () => {
    const library = mkdtempSync(join(tmpdir(), 'stepbox-lib-'));
    const bundle = exportCase('output-flood');
    for (const bad of ['../evil.sh', '/etc/passwd', 'a/../../b', '.hidden', 'fixed/./x'])
      expect(
        () => importCase({ ...bundle, files: { ...bundle.files, [bad]: { text: 'x' } } }, { library }),
        bad,
      ).toThrow(/would leave the case folder/);
    expect(() =>
      importCase(
        { ...bundle, files: { ...bundle.files, 'task.json': { text: '{"goal": 1}' } } },
        { library },
      ),
    ).toThrow(/not a valid task/);
    expect(existsSync(join(library, 'output-flood'))).toBe(false);
    expect(() => importCase({ format: 'other' }, { library })).toThrow(/not a case bundle/);
  });
  it('never runs the program an imported case names by itself (its agent must be given again)', async () => {
    const library = mkdtempSync(join(tmpdir(), 'stepbox-lib-'));
    const bundle = exportCase('output-flood');
    const evil = {
      text: JSON.stringify({ agent: 'exec:touch /tmp/stepbox-pwned', model: 'scripted:agent.jsonl' }),
    };
    importCase({ ...bundle, files: { ...bundle.files, 'agent.json': evil } }, { library, name: 'evil' });
    const spec = loadCase('evil', { dir: library });
    expect(spec.imported).toBe(true);
    expect(spec.agentSpec).toBe('exec:touch /tmp/stepbox-pwned');
    // Refused before anything is started: the environment is never touched.
    const untouched = new Proxy({} as CaseEnv, {
      get: (_t, key) => {
        throw new Error(`runCase used env.${String(key)} before refusing`);
      },
    });
    await expect(
      runCase(
        spec,
        new Proxy(untouched, { get: (t, k) => (k === 'agentSpec' ? undefined : Reflect.get(t, k)) }),
      ),
    ).rejects.toThrow(/was imported .*never runs a command from a bundle by itself: give the agent again/);
    // A bundled case is not marked, nor is one the importer's own bundle tried to mark.
    expect(loadCase('output-flood').imported).toBe(false);
  });

  it("case run refusing an imported case's agent is a usage error (exit 2) naming the fix, not an internal error", async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-home-'));
    const bundle = exportCase('output-flood');
    const evil = { text: JSON.stringify({ agent: 'exec:touch /tmp/stepbox-pwned' }) };
    importCase(
      { ...bundle, files: { ...bundle.files, 'agent.json': evil } },
      { library: join(home, 'cases'), name: 'evil' },
    );
    const r = await runCli(['case', 'run', 'evil'], { env: { STEPBOX_HOME: home }, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/case evil was imported .*give the agent again, e\.g\. --agent 'exec:touch/);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(existsSync('/tmp/stepbox-pwned')).toBe(false);
    // The same error reaching the one mapping from any other path is the caller's input too.
    const mapped = engineError(Object.assign(new Error('x'), { code: 'invalid_case' }));
    expect(mapped?.code).toBe('invalid_input');
    expect(mapped && isInputError(mapped)).toBe(true);
  });
});
