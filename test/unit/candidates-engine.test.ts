import { afterEach, describe, expect, it } from 'vitest';
import { candidateSources } from '../../electron/engine/candidates/candidate-sources.js';
import { CANDIDATE_NOT_PICKED, tryCandidates } from '../../electron/engine/candidates/try-candidates.js';
import { HarnessError } from '../../electron/engine/harness/harness-error.js';
import { FakeOpenAi, wireCall } from '../support/fake-openai.js';
import { call, final, memorySupply, memoryTask, startScripted, tempHome } from '../support/harness.js';
import { startEpisode } from '../../electron/engine/harness/index.js';
import { choicePair } from '../../electron/engine/export/dpo-jsonl.js';
import { readLineage } from '../../electron/engine/trace/lineage.js';
import { createMemoryProvider } from '../support/memory-sandbox/provider.js';
import { coldSupply } from '../../electron/engine/sandbox/sandbox-supply.js';

let env: ReturnType<typeof tempHome> | undefined;
let server: FakeOpenAi | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  delete process.env.OPENAI_API_KEY;
  env?.cleanup();
  env = undefined;
});

const write = (path: string, content: string) => call('write_file', { path, content });

describe('candidates on the memory sandbox', () => {
  it('asks a model endpoint N times with the seed varied, and records each seed', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    process.env.OPENAI_API_KEY = 'sk-test';
    server.onRequest = (req) => ({
      message: {
        content: null,
        tool_calls: [
          wireCall(`c${String(req.body.seed)}`, 'write_file', {
            path: `s${String(req.body.seed)}.txt`,
            content: 'x',
          }),
        ],
      },
    });
    const parent = await startEpisode({
      task: memoryTask({ verifier: null }),
      agentSpec: 'openai:fake-model',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl, seed: 1 },
    });
    await parent.step();
    await parent.dispose();
    const { sources, notes } = candidateSources({ agentKind: 'openai', n: 3, seed: 5 });
    expect(notes).toEqual([]);
    server.requests.length = 0;
    const set = await tryCandidates({
      id: parent.episode,
      at: 1,
      sources,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl },
    });
    expect(server.requests.map((r) => r.body.seed).sort()).toEqual([5, 6, 7]);
    expect(set.candidates.map((c) => [c.seed, c.action.calls[0].arguments.path])).toEqual([
      [5, 's5.txt'],
      [6, 's6.txt'],
      [7, 's7.txt'],
    ]);
    for (const c of set.candidates)
      expect(env.store.readTrace(env.store.resolve(c.branch)).header).toMatchObject({
        candidate: { group: set.group, step: 1, seed: c.seed, origin: 'model' },
        // The branch goes on at the episode's recorded seed; the candidate's own seed decided step 2 only.
        agent: { seed: 1 },
      });
    await set.discard();
    for (const c of set.candidates)
      expect(env.store.readTrace(env.store.resolve(c.branch)).end?.end_reason).toBe(CANDIDATE_NOT_PICKED);
  }, 60_000);

  it('a picked model candidate continues the episode at its recorded seed, not the candidate’s', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    process.env.OPENAI_API_KEY = 'sk-test';
    let n = 0;
    server.onRequest = () => ({
      message: {
        content: null,
        tool_calls: [wireCall(`c${n}`, 'write_file', { path: `f${n++}.txt`, content: 'x' })],
      },
    });
    const parent = await startEpisode({
      task: memoryTask({ verifier: null }),
      agentSpec: 'openai:fake-model',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl, seed: 3 },
    });
    await parent.step();
    await parent.dispose();
    server.requests.length = 0;
    const set = await tryCandidates({
      id: parent.episode,
      at: 1,
      sources: candidateSources({ agentKind: 'openai', n: 1, seed: 7 }).sources,
      runOn: 1,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl },
    });
    const chosen = await set.pick(0);
    await chosen.step();
    await chosen.dispose();
    // Step 2 (the candidate) at seed 7; the run-on step 3 and the continued step 4 at the recorded 3.
    expect(server.requests.map((r) => r.body.seed)).toEqual([7, 3, 3]);
  }, 60_000);

  it('a script has one next answer; run-on continues with the branch agent; a set is picked once', async () => {
    env = tempHome();
    const parent = await startScripted(env, { task: memoryTask() }, [
      write('a.txt', 'a'),
      write('b.txt', 'b'),
      write('done.txt', 'ok'),
      final('done'),
    ]);
    await parent.run();
    await parent.dispose();
    const { sources, notes } = candidateSources({
      agentKind: 'scripted',
      n: 4,
      typed: [write('t.txt', 't')],
    });
    expect(notes[0]).toMatch(/one next answer/);
    expect(sources.map((s) => s.kind)).toEqual(['model', 'given']);
    const set = await tryCandidates({
      id: parent.episode,
      at: 1,
      sources,
      runOn: 1,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    // The script's own step 2, then its step 3; the typed one, then the script's step 3 (its step 2 replaced).
    expect(set.candidates.map((c) => [c.steps_run, c.files_changed.map((f) => f.path)])).toEqual([
      [2, ['b.txt', 'done.txt']],
      [2, ['done.txt', 't.txt']],
    ]);
    await expect(set.pick(5)).rejects.toThrow(HarnessError);
    const chosen = await set.pick(1);
    await expect(set.pick(0)).rejects.toThrow(/already picked or discarded/);
    await chosen.run();
    expect(chosen.ended()?.status).toBe('succeeded');
    await chosen.dispose();
  }, 60_000);

  it('a candidate line that is not JSON is an error naming the line', () => {
    expect(() =>
      candidateSources({ agentKind: 'scripted', n: 0, typed: [{ tool_calls: 'x' }] }),
    ).not.toThrow();
    expect(() =>
      candidateSources({ agentKind: 'scripted', n: 0, file: '/nonexistent/candidates.jsonl' }),
    ).toThrow(/cannot read script \/nonexistent\/candidates.jsonl/);
  });
  it('a candidate that wrote a file over the per-file snapshot cap lists it, marked not captured', async () => {
    const provider = createMemoryProvider({ snapshotFileCapBytes: 1000 });
    env = tempHome(provider);
    const supply = coldSupply(provider);
    const parent = await startScripted(env, { task: memoryTask(), supply }, [
      write('a.txt', 'a'),
      final('done'),
    ]);
    await parent.step();
    await parent.dispose();
    const big = 'x'.repeat(5000);
    const set = await tryCandidates({
      id: parent.episode,
      at: 1,
      sources: candidateSources({ agentKind: 'scripted', n: 0, typed: [write('big.bin', big)] }).sources,
      store: env.store,
      parts: env.parts,
      supply,
    });
    expect(set.candidates[0].files_changed).toEqual([{ path: 'big.bin', change: 'added', captured: false }]);
    await set.discard();
  });

  it('a live episode’s snapshots list an uncaptured file when it appears, grows over the cap, changes or goes', async () => {
    const provider = createMemoryProvider({ snapshotFileCapBytes: 1000 });
    env = tempHome(provider);
    const c = await startScripted(env, { task: memoryTask(), supply: coldSupply(provider) }, [
      write('big.bin', 'x'.repeat(5000)),
      write('other.txt', 'o'),
      write('grow.txt', 'small'),
      write('grow.txt', 'y'.repeat(3000)),
      write('big.bin', 'z'.repeat(6000)),
      call('execute_shell', { command: 'rm big.bin' }),
      final('done'),
    ]);
    await c.run();
    await c.dispose();
    const changed = c
      .history()
      .filter((e) => e.type === 'snapshot' && e.step > 0)
      .map((e) => (e.type === 'snapshot' ? e.changed : []));
    expect(changed).toEqual([
      [{ path: 'big.bin', change: 'added', captured: false }],
      [{ path: 'other.txt', change: 'added' }],
      [{ path: 'grow.txt', change: 'added' }],
      [{ path: 'grow.txt', change: 'modified', captured: false }],
      [{ path: 'big.bin', change: 'modified', captured: false }],
      [{ path: 'big.bin', change: 'deleted', captured: false }],
      [],
    ]);
  });
  it('a preference pair from a pick late in a long episode keeps the whole conversation up to that step', async () => {
    env = tempHome();
    const steps = Array.from({ length: 20 }, (_, i) => call('execute_shell', { command: `echo ${i + 1}` }));
    const task = memoryTask({ max_steps: 30 });
    const parent = await startScripted(env, { task }, [...steps, final('done')]);
    await parent.run();
    await parent.dispose();
    const set = await tryCandidates({
      id: parent.episode,
      at: 15,
      sources: candidateSources({
        agentKind: 'scripted',
        n: 0,
        typed: [write('a.txt', 'a'), write('b.txt', 'b')],
      }).sources,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    const chosen = await set.pick(0);
    await chosen.dispose();
    const branch = (id: string) => {
      const info = env!.store.resolve(id);
      return {
        branch: info.branch,
        parentBranch: info.parentBranch,
        forkStep: info.forkStep,
        events: readLineage(env!.store, info).events,
      };
    };
    const [a, b] = set.candidates.map((c) => branch(c.branch));
    const pair = choicePair(task, 15, a, [b]);
    // system, user, then an assistant message and a tool result for each of the 15 steps before.
    expect(pair?.record.input.messages).toHaveLength(2 + 15 * 2);
    expect(pair?.record.input.messages.at(-1)).toMatchObject({ role: 'tool' });
    expect(pair?.record.preferred_output[0].tool_calls?.[0].function.arguments).toContain('a.txt');
  });
});
