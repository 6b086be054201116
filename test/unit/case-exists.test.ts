// Save as case… with a name already in the case library: one refusal with the code `conflict`,
// worded by each surface for its own way out — the CLI names --force, the window offers
// Replace (the same force option) or another name, and never shows a host path
// (notices-refused-dialog: "already exists in /tmp/…/cases; pass --force to replace it").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../electron/cli.js';
import { caseFromEpisode } from '../../electron/engine/cases/case-from-episode.js';
import { CaseError } from '../../electron/engine/cases/case-library.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import { createNoticesStore } from '../../renderer/src/stores/notices/notices-store';
import { createTeachingStore } from '../../renderer/src/stores/teaching/teaching-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { writeSampleEpisode } from '../support/traces.js';

/** A branch whose verifier failed after the agent said it was done: QA flags it, so it saves. */
const FAILED = {
  status: 'failed',
  end_reason: 'final_answer',
  verifier: { success: false, exit_code: 1 },
} as const;

let home: string;
let services: AppServices | null = null;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-case-exists-'));
});
afterEach(async () => {
  await services?.dispose();
  services = null;
  rmSync(home, { recursive: true, force: true });
});

async function flagged(): Promise<string> {
  const store = openEpisodeStore(home);
  return (await writeSampleEpisode(store, { agent: 'openai:m@http://127.0.0.1:9/v1', end: FAILED })).branch;
}

describe('a case name already in the library', () => {
  it('the engine refuses it with the code conflict; --force replaces it', async () => {
    const branch = await flagged();
    const store = openEpisodeStore(home);
    const library = join(home, 'cases');
    caseFromEpisode(store, branch, 'twice', { library });
    let thrown: unknown = null;
    try {
      caseFromEpisode(store, branch, 'twice', { library });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CaseError);
    expect((thrown as CaseError).code).toBe('conflict');
    expect(caseFromEpisode(store, branch, 'twice', { library, force: true }).name).toBe('twice');
  });

  it('the CLI keeps its way out: pass --force', async () => {
    const branch = await flagged();
    const run = async (...argv: string[]) => {
      const stderr = new PassThrough();
      let err = '';
      stderr.on('data', (c) => (err += c));
      const code = await main(argv, {
        stdout: new PassThrough(),
        stderr,
        stdin: new PassThrough(),
        env: { ...process.env, STEPBOX_HOME: home },
      });
      return { code, err };
    };
    expect((await run('case', 'new', branch, '--name', 'twice')).code).toBe(0);
    const again = await run('case', 'new', branch, '--name', 'twice');
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/case "twice" already exists in .*cases; pass --force to replace it/);
  });

  it('cases.save answers conflict with the case folder relative to the store, no host path and no flag', async () => {
    const branch = await flagged();
    services = createAppServices(engineServicesPorts({ home }));
    expect((await services.handle('cases.save', { id: branch, name: 'twice' })).ok).toBe(true);
    const again = await services.handle('cases.save', { id: branch, name: 'twice' });
    expect(again.ok).toBe(false);
    if (again.ok) return;
    expect(again.error.code).toBe('conflict');
    expect(again.error.message).toContain('cases/twice');
    expect(again.error.message).not.toContain(home);
    expect(again.error.message).not.toMatch(/--force|--name/);
    // The window's Replace is the contract's force option.
    const replaced = await services.handle('cases.save', { id: branch, name: 'twice', force: true });
    expect(replaced.ok).toBe(true);
  });

  it('the window words the conflict from its code: Replace or another name, then Replace saves with force', async () => {
    const fake = createFakeBackend();
    const notices = createNoticesStore();
    const teaching = createTeachingStore(fake.client, () => {}, notices);
    fake.on('cases.save', (r) =>
      r.force
        ? { name: r.name, dir: `/host/store/cases/${r.name}`, rules: ['unverified_success'], steps: 2 }
        : {
            code: 'conflict',
            message: `case "${r.name}" already exists in the case library (cases/${r.name})`,
          },
    );
    teaching.getState().openSave();
    expect(await teaching.getState().saveAsCase('b-1', 'twice')).toBe(false);
    const s = teaching.getState();
    expect(s.dialog).toBe('save');
    expect(s.conflict).toBe('twice');
    expect(s.refused).toMatch(/cases\/twice/);
    expect(s.refused).toMatch(/Replace/);
    expect(s.refused).toMatch(/another name/);
    expect(s.refused).not.toMatch(/--force|pass/);
    // Said in the open dialog only: a red bar behind it said the same thing at once.
    expect(notices.getState().items).toHaveLength(0);
    // Closed without a save, the bar keeps it.
    teaching.getState().close();
    const bar = notices.getState().items.map((n) => n.text);
    expect(bar).toHaveLength(1);
    expect(bar[0]).not.toMatch(/--force/);
    expect(bar[0]).toMatch(/another name/);
    // The bar and the dialog offer the same way out: the dialog's Replace, never "Save as case… again".
    expect(bar[0]).toMatch(
      /In the Save as case dialog, press Replace to save this episode over it, or type another name/,
    );
    expect(s.refused).toMatch(/Press Replace to save this episode over it, or type another name/);
    expect(bar[0]).not.toMatch(/again/);
    // A refusal of another kind offers no Replace.
    fake.on('cases.save', () => ({
      code: 'invalid_input',
      message: 'episode b-1 has no recorded decision to replay',
    }));
    teaching.getState().openSave();
    await teaching.getState().saveAsCase('b-1', 'other');
    expect(teaching.getState().conflict).toBeNull();
    fake.on('cases.save', (r) =>
      r.force
        ? { name: r.name, dir: `/host/store/cases/${r.name}`, rules: ['unverified_success'], steps: 2 }
        : {
            code: 'conflict',
            message: `case "${r.name}" already exists in the case library (cases/${r.name})`,
          },
    );
    await teaching.getState().saveAsCase('b-1', 'twice');
    // Replace: the same save with the engine's force option.
    expect(await teaching.getState().saveAsCase('b-1', 'twice', true)).toBe(true);
    expect(fake.callsOf('cases.save').at(-1)).toEqual({ id: 'b-1', name: 'twice', force: true });
    expect(teaching.getState()).toMatchObject({ dialog: 'none', refused: null, conflict: null });
  });
});
