// A fork of a live branch takes the Fork settings' own agent settings, as a fork of a recorded
// one does: the server dropped them, so a live fork to an exec: agent with "Its model calls
// answered by" filled was refused with "needs --model SOURCE" (a helper's finding, stop 44).
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import { createAppServices } from '../../electron/services/app-services.js';
import type { EpisodeController } from '../../electron/engine/harness/episode-controller.js';
import { fakePorts } from '../support/contract-fakes.js';
import { value } from '../support/contract.js';
import { call, final, memoryTask, startScripted, tempHome } from '../support/harness.js';

const MODEL = 'openai:m@http://127.0.0.1:9/v1';
let env: ReturnType<typeof tempHome> | null = null;
afterEach(() => {
  env?.cleanup();
  env = null;
});

describe('a fork of a live branch with its own agent settings', () => {
  it('the engine builds the fork’s agent with them (an exec: agent gets its model source)', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask({ verifier: null }) }, [
      call('execute_shell', { command: 'echo a' }),
      final('ok'),
    ]);
    try {
      await c.step();
      await expect(c.fork(1, 'exec:node a.js')).rejects.toThrow(/needs --model SOURCE/);
      const f = await c.fork(1, 'exec:node a.js', { model: MODEL });
      try {
        expect(f.branch).not.toBe(c.branch);
        const header = env.store.readTrace(env.store.resolve(f.branch)).events[0];
        expect(JSON.stringify(header)).toContain(MODEL);
      } finally {
        await f.dispose();
      }
    } finally {
      await c.dispose();
    }
  });

  it('the window’s fork of a live branch hands the Fork settings’ agent options to the engine', async () => {
    const { ports } = fakePorts();
    const started: EpisodeController[] = [];
    const start = ports.harness.start.bind(ports.harness);
    ports.harness.start = async (o) => {
      const c = await start(o);
      started.push(c);
      return c;
    };
    const services = createAppServices(ports);
    const client = createClient(createMemoryTransport(services));
    try {
      const live = value(await client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
      value(await client.episode.step({ id: live.branch }));
      value(
        await client.episode.fork({
          id: live.branch,
          step: 1,
          agent: 'exec:node a.js',
          agent_options: { model: MODEL, temperature: 0.5 },
        }),
      );
      const forked = (started[0] as unknown as { forkedWith: unknown[] }).forkedWith;
      expect(forked).toEqual([
        { step: 1, agentSpec: 'exec:node a.js', agentOptions: { model: MODEL, temperature: 0.5 } },
      ]);
    } finally {
      await services.dispose();
    }
  });
});

describe('a fork of a live branch supersedes it only once it goes on', () => {
  it('a fork whose first step fails leaves its parent live (not "continued"); one that steps stops it', async () => {
    const { ports } = fakePorts();
    const services = createAppServices(ports);
    const client = createClient(createMemoryTransport(services));
    const live = () => services.episodes.branches();
    try {
      const a = value(await client.episode.start({ task: { kind: 'sample', id: 'hello' } })).branch;
      value(await client.episode.step({ id: a }));
      // Its agent would not start: the fork's first step ends it in an error.
      const b = value(
        await client.episode.fork({ id: a, step: 1, agent: 'exec:false', agent_options: { model: MODEL } }),
      ).branch;
      const failed = value(await client.episode.step({ id: b }));
      expect(failed.state).toBe('ended');
      await services.episodes.settled();
      expect(live()).toContain(a);
      expect(value(await client.episode.open({ id: a })).state).toMatchObject({ state: 'paused' });
      // A fork that completes a step of its own goes on: the parent is stopped as superseded.
      const c = value(await client.episode.fork({ id: a, step: 1 })).branch;
      value(await client.episode.step({ id: c }));
      await services.episodes.settled();
      expect(live()).not.toContain(a);
      expect(live()).toContain(c);
    } finally {
      await services.dispose();
    }
  });
});
