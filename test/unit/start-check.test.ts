// episode.checkStart: the window asks it before "Stop the live episode?", so a start that would
// be refused is said before the person agrees to stop anything (walk shots 49–52); a broken
// task.json is said at Open… and first at a start, before its agent (walk shots 86–88).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { checkWorld } from '../../electron/services/engine-ports.js';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import { fakePorts } from '../support/contract-fakes.js';
import { value } from '../support/contract.js';

let dispose: (() => Promise<void>) | null = null;
afterEach(async () => {
  await dispose?.();
  dispose = null;
});

/** Services on the fake engine with the real task read (the one a start makes). */
function rig() {
  const { ports } = fakePorts();
  const services = createAppServices({ ...ports, harness: { ...ports.harness, check: checkWorld } });
  dispose = () => services.dispose();
  return { client: createClient(createMemoryTransport(services)), services };
}

/** A folder holding `task` as its task.json (text as written). */
function taskFolder(task: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-start-check-'));
  writeFileSync(join(dir, 'task.json'), task);
  return dir;
}

describe('episode.checkStart', () => {
  it('refuses what the start would, in the same words, and starts nothing', async () => {
    const { client, services } = rig();
    const dir = taskFolder(JSON.stringify({ name: 'notes', goal: 'list the files' }));
    const project = value(await client.projects.open({ path: dir }));
    expect(project.problem).toBeUndefined();
    const task = { kind: 'project' as const, path: dir };

    const noAgent = await client.episode.checkStart({ task });
    expect(noAgent.ok ? '' : noAgent.error.message).toBe(
      'Agent: this task names no agent of its own: type one in Agent (e.g. manual, scripted:FILE or openai:MODEL)',
    );
    for (const agent of ['scripted:agent.jsonl', 'scripted:/etc/passwd']) {
      const checked = await client.episode.checkStart({ task, agent });
      const started = await client.episode.start({ task, agent });
      expect(checked.ok).toBe(false);
      expect(checked.ok ? '' : checked.error.message).toMatch(/^Agent: /);
      expect(started).toEqual(checked);
    }
    // A start that would go: the check says so and no episode began.
    expect(value(await client.episode.checkStart({ task, agent: 'manual' }))).toEqual({});
    expect(services.episodes.branches()).toEqual([]);
  });

  it('a broken task.json is the project’s problem at Open…, and a start says it before the agent', async () => {
    const { client } = rig();
    const dir = taskFolder('{"name": "bad", "goal": "x",,}');
    const project = value(await client.projects.open({ path: dir }));
    expect(project.problem).toMatch(/not valid JSON at line 1, column \d+/);
    const listed = value(await client.projects.list({}));
    expect(listed.projects.find((p) => p.path === dir)?.problem).toBe(project.problem);
    for (const agent of [undefined, 'manual']) {
      const res = await client.episode.checkStart({
        task: { kind: 'project', path: dir },
        ...(agent ? { agent } : {}),
      });
      expect(res.ok ? '' : res.error.message).toBe(project.problem);
    }
  });
});
