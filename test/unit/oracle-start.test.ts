// Walk 11, finding 2: the oracle on a project with no solution was accepted by the window, a
// sandbox started, and the episode ended as an error at step 0 naming the CLI's flag. The start
// refuses it first, in the window's words under Agent, and a project's card says "with oracle"
// only where the oracle can run.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { selectProjectAgent, selectTaskAgent } from '../../renderer/src/stores/episodes/start-agent.js';
import { AGENT_FIELD, startFieldOf } from '../../shared/start-paths.js';
import { fakePorts } from '../support/contract-fakes.js';
import { createFakeBackend } from '../support/renderer-fake-client.js';
import { createEpisodesStore } from '../../renderer/src/stores/episodes/episodes-store.js';
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
      // Greyed with the words the start is refused in (the server's, below).
      expect(selectProjectAgent(byPath.get(bare)!, 'oracle')).toEqual({
        runs: null,
        why: 'not with oracle: it has no solution/solve.sh to run',
        refusal: `Agent: oracle runs a Harbor task's solution/solve.sh, and ${byPath.get(bare)!.name} has none; add solution/solve.sh to the task's folder or pick another agent`,
      });
      // A project names no agent of its own: an empty field greys Start in the server's words.
      expect(selectProjectAgent(byPath.get(bare)!, ' ')).toEqual({
        runs: null,
        why: 'no agent yet: type one in Agent, above',
        refusal:
          'Agent: this task names no agent of its own: type one in Agent (e.g. manual, scripted:FILE or openai:MODEL)',
      });
      expect(selectProjectAgent(byPath.get(solved)!, ' oracle ')).toEqual({
        runs: 'oracle',
        why: null,
        refusal: null,
      });
      expect(selectProjectAgent(byPath.get(bare)!, 'manual')).toEqual({
        runs: 'manual',
        why: null,
        refusal: null,
      });
    } finally {
      await services.dispose();
    }
  });
});

/** An episodes store over a fake server whose every start opens branch b1. */
function startingStore() {
  const fake = createFakeBackend();
  fake.on('library.list', () => ({ episodes: [], total: 0 }));
  fake.on('episode.checkStart', () => ({}));
  fake.on('episode.start', () => ({
    episode: 'ep1',
    branch: 'b1',
    state: 'paused' as const,
    step: 0,
    reason: null,
  }));
  const store = createEpisodesStore(
    fake.client,
    () => {},
    () => null,
  );
  return { fake, store };
}

describe("the agent fields after a project's start (walk 11, finding 3)", () => {
  it('are that project’s: another project’s card and Start do not take them unseen; typed anew they are for any', async () => {
    const { fake, store } = startingStore();
    const py = { path: '/home/me/proj-py', name: 'proj-py', kind: 'task' as const, opened_at: 1 };
    const bb = { path: '/home/me/proj-bb', name: 'proj-bb', kind: 'task' as const, opened_at: 2 };
    store.getState().setAgent('scripted:/home/me/fix-py.jsonl');
    // Typed, before any start: every card says it.
    expect(selectProjectAgent(bb, store.getState().agent, store.getState().agentOf).runs).toBe(
      'scripted:/home/me/fix-py.jsonl',
    );
    expect(await store.getState().startProject(py, '')).toBe('b1');
    const { agent, agentOf } = store.getState();
    expect(selectProjectAgent(py, agent, agentOf).runs).toBe('scripted:/home/me/fix-py.jsonl');
    expect(selectProjectAgent(bb, agent, agentOf)).toEqual({
      runs: null,
      why: 'no agent yet: Agent holds proj-py’s; type or choose one',
      refusal:
        'Agent: it holds the agent proj-py started with; type or choose the one for proj-bb (nothing carries from one project to another)',
    });
    // proj-bb's Start is refused under Agent, before anything is asked of the server.
    expect(await store.getState().startProject(bb, '')).toBeNull();
    expect(store.getState().startFailed).toEqual({
      key: bb.path,
      text: 'Agent: it holds the agent proj-py started with; type or choose the one for proj-bb (nothing carries from one project to another)',
    });
    expect(startFieldOf(store.getState().startFailed!.text)).toBe(AGENT_FIELD);
    expect(fake.callsOf('episode.start')).toHaveLength(1);
    // Chosen or typed anew: for the next start, whichever it is.
    store.getState().setAgent('manual');
    expect(await store.getState().startProject(bb, '')).toBe('b1');
    expect(fake.callsOf('episode.start').at(-1)).toMatchObject({
      task: { kind: 'project', path: bb.path },
      agent: 'manual',
    });
  });

  it('a sample task’s ▶ after a project started with a script runs the task’s own agent, and says so', async () => {
    const { fake, store } = startingStore();
    const py = { path: '/home/me/proj-py', name: 'proj-py', kind: 'task' as const, opened_at: 1 };
    const hello = { id: 'hello-python' };
    store.getState().setAgent('scripted:/home/me/fix-py.jsonl');
    // Typed for the next start, before any: a sample's ▶ takes it too.
    expect(selectTaskAgent(hello, store.getState().agent, store.getState().agentOf)).toEqual({
      spec: 'scripted:/home/me/fix-py.jsonl',
      own: null,
    });
    await store.getState().startProject(py, '');
    const { agent, agentOf } = store.getState();
    expect(selectTaskAgent(hello, agent, agentOf)).toEqual({
      spec: null,
      own: 'runs the task’s own agent: Agent holds proj-py’s',
    });
    await store.getState().startTask({ ...hello, name: 'hello-python', goal: 'g', path: '/t', agent: null });
    const sent = fake.callsOf('episode.start').at(-1) as Record<string, unknown>;
    expect(sent).toMatchObject({ task: { kind: 'sample', id: 'hello-python' } });
    expect(sent.agent).toBeUndefined();
  });
});
