import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { caseDir, caseRoot, casesDir, loadCase } from '../../electron/engine/cases/case-library.js';
import { exportCase, importCase } from '../../electron/engine/cases/case-bundle.js';
import { caseFromEpisode } from '../../electron/engine/cases/case-from-episode.js';
import { shareData } from '../../electron/engine/share/share-data.js';
import { parseRedactions } from '../../electron/engine/export/redact.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { OPERATIONS } from '../../shared/contract/operations.js';
import { caseNameProblem } from '../../shared/case-name.js';
import { writeSampleEpisode } from '../support/traces.js';
import { runCli } from '../support/cli.js';

// A case name becomes a folder of the case library: `../../x`, `a/b`, `a\b`, NUL or an absolute
// path reached path joins (caseRoot found `<library>/../../evil/expected.json`). One rule
// (shared/case-name.ts) where a name enters, and caseDir where it becomes a path.

const HOSTILE = ['../../evil', '..', 'a/b', 'a\\b', 'a\0b', '/etc', '', 'Evil', 'a'.repeat(65)];

let dir: string;
let home: string;
let savedHome: string | undefined;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'stepbox-case-names-')));
  home = join(dir, 'home');
  savedHome = process.env.STEPBOX_HOME;
  process.env.STEPBOX_HOME = home;
  // What `../../evil` names from the library ($STEPBOX_HOME/cases): a folder outside it.
  mkdirSync(join(dir, 'evil'), { recursive: true });
  cpSync(join(casesDir(), 'output-flood'), join(dir, 'evil'), { recursive: true });
});
afterEach(() => {
  if (savedHome === undefined) delete process.env.STEPBOX_HOME;
  else process.env.STEPBOX_HOME = savedHome;
  rmSync(dir, { recursive: true, force: true });
});

/** Expects `f` to throw the CaseError of an invalid case name, in the rule's words. */
function refusedName(f: () => unknown, name: string): void {
  try {
    f();
  } catch (e) {
    expect((e as { code?: string }).code, name).toBe('invalid_case');
    expect((e as Error).message).toContain(caseNameProblem(name)!);
    return;
  }
  throw new Error(`${JSON.stringify(name)} was not refused`);
}

describe('a case name never leaves the case folder', () => {
  it('caseDir, caseRoot and loadCase refuse every name that is not one, even where its folder exists', () => {
    for (const name of HOSTILE) {
      expect(caseNameProblem(name), name).not.toBeNull();
      refusedName(() => caseDir(join(home, 'cases'), name), name);
      refusedName(() => caseRoot(name), name);
      refusedName(() => loadCase(name), name);
      refusedName(() => loadCase(name, { dir: join(home, 'cases') }), name);
    }
    expect(caseDir(join(home, 'cases'), 'my-case')).toBe(join(home, 'cases', 'my-case'));
    expect(caseRoot('output-flood')?.origin).toBe('bundled');
    expect(caseRoot('no-such-case')).toBeNull();
  });

  it('a bundle named ../../evil, or imported as one, is refused before a byte is written', () => {
    const library = join(home, 'cases');
    const bundle = exportCase('output-flood');
    for (const name of ['../../evil', 'a/b', '/tmp/x']) {
      expect(() => importCase({ ...bundle, name }, { library })).toThrow(caseNameProblem(name)!);
      refusedName(() => importCase(bundle, { library, name }), name);
    }
  });

  it('save as case and the contract take only a case name, in the window’s words', async () => {
    const store = openEpisodeStore(home);
    const { episode } = await writeSampleEpisode(store, { steps: 2 });
    refusedName(
      () => caseFromEpisode(store, episode, '../../evil', { library: join(home, 'cases') }),
      '../../evil',
    );
    for (const [op, request] of [
      ['cases.open', { id: '../../evil' }],
      ['cases.save', { id: episode, name: '../../evil' }],
      ['files.list', { root: 'task', task: { kind: 'case', id: '../../evil' } }],
    ] as const) {
      const r = OPERATIONS[op].request.safeParse(request);
      expect(r.success, op).toBe(false);
      expect(r.error?.issues[0]?.message).toBe(caseNameProblem('../../evil'));
    }
  });

  it('share never looks a recorded task name up as a path (a task named ../../evil)', async () => {
    const store = openEpisodeStore(home);
    const { episode } = await writeSampleEpisode(store, { steps: 2, task: '../../evil' });
    const data = await shareData(store, episode, parseRedactions([]));
    expect(data.walkthrough).toBeNull();
  });

  it('the CLI: case run, case export and case import of ../../evil exit 2 with the rule', async () => {
    const env = { STEPBOX_HOME: home, STEPBOX_LOG: 'error' };
    for (const args of [
      ['case', 'run', '../../evil'],
      ['case', 'export', '../../evil'],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`case name "../../evil": ${caseNameProblem('../../evil')}`);
    }
    const file = join(dir, 'evil.json');
    writeFileSync(file, JSON.stringify({ ...exportCase('output-flood'), name: '../../evil' }));
    const imported = await runCli(['case', 'import', file], { env });
    expect(imported.code, imported.stderr).toBe(2);
    expect(imported.stderr).toContain(caseNameProblem('../../evil'));
  });
});
