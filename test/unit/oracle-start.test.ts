// Walk 11, finding 2: the oracle on a project with no solution was accepted by the window, a
// sandbox started, and the episode ended as an error at step 0 naming the CLI's flag. The start
// refuses it first, in the window's words under Agent, and a project's card says "with oracle"
// only where the oracle can run.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { selectProjectAgent } from '../../renderer/src/stores/projects/projects-store.js';
import { AGENT_FIELD, startFieldOf } from '../../shared/start-paths.js';
import { fakePorts } from '../support/contract-fakes.js';
import type { ResponseOf } from '../../shared/contract/operations.js';

const base = mkdtempSync(join(tmpdir(), 'stepbox-oracle-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A task.json project, with or without solution/solve.sh beside it. */
function project(name: string, solution: boolean): string {
  const dir = join(base, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'task.json'), '{"name":"t","goal":"g","verifier":{"command":"true"}}');
  if (solution) {
    mkdirSync(join(dir, 'solution'));
    writeFileSync(join(dir, 'solution', 'solve.sh'), 'true\n');
  }
  return join(dir, 'task.json');
}

describe('the oracle on a project', () => {
  it('is refused before the start, under Agent, in the window’s words, where no solution is; its card says so', async () => {
    const store = join(base, 'store');
    mkdirSync(store);
    const services = createAppServices({ ...fakePorts().ports, storeHome: store });
    try {
      const bare = project('no-solution', false);
      const solved = project('solved', true);
      for (const p of [bare, solved])
        expect(await services.handle('projects.open', { path: p })).toMatchObject({ ok: true });
      const start = (path: string) =>
        services.handle('episode.checkStart', { task: { kind: 'project', path }, agent: 'oracle' });
      const refused = await start(bare);
      expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      const message = refused.ok ? '' : refused.error.message;
      expect(message).toBe(
        `Agent: oracle runs a Harbor task's solution/solve.sh, and ${join(base, 'no-solution')} has none; add solution/solve.sh to the task's folder or pick another agent`,
      );
      expect(message).not.toMatch(/--agent/);
      // Shown under the Agent field.
      expect(startFieldOf(message)).toBe(AGENT_FIELD);
      // Where the solution is, it starts.
      expect(await start(solved)).toEqual({ ok: true, value: {} });
      // The cards: "with oracle" only where it can run.
      const listed = await services.handle('projects.list', {});
      if (!listed.ok) throw new Error(listed.error.message);
      const byPath = new Map((listed.value as ResponseOf<'projects.list'>).projects.map((p) => [p.path, p]));
      expect(byPath.get(bare)?.oracle).toBe(false);
      expect(byPath.get(solved)?.oracle).toBe(true);
      expect(selectProjectAgent(byPath.get(bare)!, 'oracle')).toEqual({
        runs: null,
        why: 'not with oracle: it has no solution/solve.sh to run',
      });
      expect(selectProjectAgent(byPath.get(solved)!, ' oracle ')).toEqual({ runs: 'oracle', why: null });
      expect(selectProjectAgent(byPath.get(bare)!, 'manual')).toEqual({ runs: 'manual', why: null });
    } finally {
      await services.dispose();
    }
  });
});
