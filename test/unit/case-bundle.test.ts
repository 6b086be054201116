import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportCase, importCase } from '../../electron/engine/cases/case-bundle.js';
import { loadCase } from '../../electron/engine/cases/case-library.js';
import { runCase, type CaseEnv } from '../../electron/engine/cases/case-runner.js';

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
});
