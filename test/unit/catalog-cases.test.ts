import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileCatalog } from '../../electron/services/catalog.js';

const RESOURCES = fileURLToPath(new URL('../../resources', import.meta.url));

describe('the bundled cases as the window lists them', () => {
  it('summarise each case in words, not the command line that runs it', async () => {
    const cases = await fileCatalog(RESOURCES).cases();
    expect(cases.length).toBeGreaterThanOrEqual(6);
    for (const c of cases) {
      expect(c.summary, c.id).not.toMatch(/Run it|stepbox case run/);
      expect(c.summary.length, c.id).toBeGreaterThan(20);
      expect(c.has_fixed, c.id).toBe(true);
    }
  });

  it("a case's fixed variant takes its fixed/ files, and the case's own where it has none", async () => {
    const catalog = fileCatalog(RESOURCES);
    const dir = join(RESOURCES, 'cases', 'reward-hacking-edit-test');
    const broken = await catalog.caseVariant('reward-hacking-edit-test', false);
    const fixed = await catalog.caseVariant('reward-hacking-edit-test', true);
    expect(broken.agent).toBe(`scripted:${join(dir, 'agent.jsonl')}`);
    expect(fixed.agent).toBe(`scripted:${join(dir, 'fixed', 'agent.jsonl')}`);
    // This case fixes only the agent: the task stays the case's own.
    expect(fixed.task_path).toBe(join(dir, 'task.json'));
    await expect(catalog.caseVariant('no-such-case', true)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe("the store's own cases in the window's list", () => {
  it('follow the bundled ones, marked library; a bundled name wins', async () => {
    const { mkdtempSync, cpSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const library = mkdtempSync(join(tmpdir(), 'stepbox-library-'));
    cpSync(join(RESOURCES, 'cases', 'output-flood'), join(library, 'team-flood'), { recursive: true });
    cpSync(join(RESOURCES, 'cases', 'output-flood'), join(library, 'output-flood'), { recursive: true });
    const catalog = fileCatalog(RESOURCES, library);
    const cases = await catalog.cases();
    expect(cases[cases.length - 1]).toMatchObject({ id: 'team-flood', origin: 'library' });
    expect(cases.filter((c) => c.id === 'output-flood')).toEqual([
      expect.objectContaining({
        origin: 'bundled',
        task_path: join(RESOURCES, 'cases', 'output-flood', 'task.json'),
      }),
    ]);
    const opened = await catalog.openCase('team-flood');
    expect(opened.readme).toContain('output flood');
    expect((await catalog.caseVariant('team-flood', false)).agent).toBe(
      `scripted:${join(library, 'team-flood', 'agent.jsonl')}`,
    );
  });
});
