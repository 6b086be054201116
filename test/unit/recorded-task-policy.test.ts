import { coldSupply } from '../../electron/engine/sandbox/sandbox-supply.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_WIDENINGS, widerThanDefaults, type WideningKind } from '../../shared/isolation-policy.js';
import { parseTask, SandboxSpec, type TaskInput } from '../../shared/task.js';
import {
  forkEpisode,
  openBranchController,
  replayVerify,
  resumeEpisode,
} from '../../electron/engine/harness/index.js';
import type { SandboxConfig, SandboxProvider } from '../../electron/engine/sandbox/sandbox.js';
import { exportBundle, importBundle } from '../../electron/engine/trace/bundle.js';
import { tryCandidates } from '../../electron/engine/candidates/try-candidates.js';
import { stageSandboxes } from '../../electron/engine/candidates/staged-sandboxes.js';
import { runWhatIf } from '../../electron/engine/harness/what-if.js';
import { loadCase } from '../../electron/engine/cases/case-library.js';
import { runCase } from '../../electron/engine/cases/case-runner.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { call, final, memoryProvider, memoryTask, startScripted, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

/** A provider recording every config it is asked for (network coerced for the memory sandbox). */
function recordingProvider(): SandboxProvider & { configs: SandboxConfig[] } {
  const configs: SandboxConfig[] = [];
  return {
    backend: memoryProvider.backend,
    configs,
    create(config) {
      configs.push(config);
      return memoryProvider.create({ ...config, network: 'none' });
    },
  } as SandboxProvider & { configs: SandboxConfig[] };
}

const WIDE: TaskInput['sandbox'] = {
  network: 'host',
  image: 'attacker/image:latest',
  limits: { memory: '64g', pids: 100000 },
};

/** A recorded episode whose task asks for `sandbox`: one finished branch, one interrupted. */
async function recorded(sandbox: TaskInput['sandbox']) {
  env = tempHome();
  const provider = recordingProvider();
  const task = memoryTask({ sandbox, verifier: null });
  const done = await startScripted(env, { task, supply: coldSupply(provider) }, [
    call('execute_shell', { command: 'echo a' }),
    final('ok'),
  ]);
  await done.run();
  await done.dispose();
  const cut = await startScripted(env, { task, supply: coldSupply(provider) }, [
    call('execute_shell', { command: 'echo a' }),
    call('execute_shell', { command: 'echo b' }),
  ]);
  await cut.step();
  await cut.stop();
  await cut.dispose();
  return { provider, done: done.branch, interrupted: cut.branch };
}

/** Every way a recorded task rebuilds a sandbox, with a consent. */
function rebuilds(
  r: Awaited<ReturnType<typeof recorded>>,
  consent: readonly WideningKind[] | undefined,
): [string, () => Promise<unknown>][] {
  const base = { store: env.store, parts: env.parts, supply: coldSupply(r.provider), consent };
  const disposing = async (p: Promise<{ dispose(): Promise<void> }>) => (await p).dispose();
  const person = { kind: 'given', origin: 'person', message: { content: 'done' } } as const;
  return [
    ['open', () => disposing(openBranchController({ ...base, id: r.done, at: 1 }))],
    ['fork', () => disposing(forkEpisode({ ...base, id: r.done, at: 1 }))],
    ['resume', () => disposing(resumeEpisode({ ...base, id: r.interrupted }))],
    ['replay --verify', () => replayVerify({ ...base, id: r.done })],
    [
      'candidates',
      async () => (await tryCandidates({ ...base, id: r.done, at: 1, sources: [person] })).discard(),
    ],
    [
      'staged candidates',
      async () => (await stageSandboxes({ ...base, id: r.done, at: 1, count: 1 })).close(),
    ],
    [
      'what-if',
      () =>
        runWhatIf({
          ...base,
          id: r.done,
          step: 1,
          call: { name: 'execute_shell', arguments: { command: 'true' } },
        }),
    ],
  ];
}

describe('a recorded task never widens isolation on its own', () => {
  it('open, fork, resume, replay, candidates (tried and staged) and what-if refuse a wider task before any sandbox exists, naming what and the flag', async () => {
    const r = await recorded(WIDE);
    const before = r.provider.configs.length;
    for (const [name, run] of rebuilds(r, undefined)) {
      const e = (await run().then(
        () => null,
        (x: unknown) => x,
      )) as { code: string; message: string } | null;
      expect(e, name).toMatchObject({ code: 'consent_required' });
      expect(e!.message).toContain('sandbox.network "host" (default "none")');
      expect(e!.message).toContain('sandbox.image "attacker/image:latest"');
      expect(e!.message).toContain('sandbox.limits.memory "64g"');
      expect(e!.message).toContain('sandbox.limits.pids 100000');
      expect(e!.message).toMatch(/--allow-network --allow-image --allow-limits \(or --trust-recorded-task\)/);
    }
    expect(r.provider.configs.length).toBe(before);
  });

  it('consent is per kind: allowing the network still refuses the image and limits', async () => {
    const r = await recorded(WIDE);
    for (const [name, run] of rebuilds(r, ['network'])) {
      const e = (await run().catch((x: unknown) => x)) as { code: string; message: string };
      expect(e, name).toMatchObject({ code: 'consent_required' });
      expect(e.message).not.toContain('sandbox.network');
      expect(e.message).toContain('--allow-image --allow-limits');
    }
  });

  it('with full consent each way runs, and the sandbox gets what the task asked', async () => {
    const r = await recorded(WIDE);
    const before = r.provider.configs.length;
    for (const [, run] of rebuilds(r, ALL_WIDENINGS)) await run();
    const made = r.provider.configs.slice(before);
    expect(made).toHaveLength(7);
    for (const c of made) expect(c).toMatchObject({ network: 'host', image: 'attacker/image:latest' });
  });

  it('the consent given is recorded on every branch it made (fork, resume, candidate)', async () => {
    const r = await recorded(WIDE);
    const base = { store: env.store, parts: env.parts, supply: coldSupply(r.provider) };
    const header = (branch: string) => env.store.readTrace(env.store.resolve(branch)).header;
    const fork = await forkEpisode({ ...base, id: r.done, at: 1, consent: ALL_WIDENINGS });
    await fork.dispose();
    expect(header(fork.branch)).toMatchObject({ consented: ['network', 'image', 'limits'] });
    const resumed = await resumeEpisode({ ...base, id: r.interrupted, consent: ALL_WIDENINGS });
    await resumed.step();
    await resumed.dispose();
    expect(header(resumed.branch)).toMatchObject({ consented: ['network', 'image', 'limits'] });
    const set = await tryCandidates({
      ...base,
      id: r.done,
      at: 1,
      consent: ALL_WIDENINGS,
      sources: [{ kind: 'given', origin: 'person', message: { content: 'done' } }],
    });
    expect(header(set.candidates[0].branch)).toMatchObject({ consented: ['network', 'image', 'limits'] });
    await set.discard();
    // A task within the defaults records no consent: there was nothing to consent to.
    const plain = await recorded({});
    const f2 = await forkEpisode({
      store: env.store,
      parts: env.parts,
      supply: coldSupply(plain.provider),
      id: plain.done,
      at: 1,
      consent: ALL_WIDENINGS,
    });
    await f2.dispose();
    expect(header(f2.branch)).not.toHaveProperty('consented');
  });

  it('case run: a library case (saved or imported) is a recorded task; a bundled case is ours', async () => {
    env = tempHome();
    const provider = recordingProvider();
    const bundled = loadCase('output-flood');
    const wide = memoryTask({ sandbox: { network: 'host' }, verifier: null });
    const library = { ...bundled, origin: 'library' as const, task: wide };
    const caseEnv = {
      store: env.store,
      index: env.engine.index,
      parts: env.parts,
      supply: coldSupply(provider),
    };
    const e = (await runCase(library, caseEnv).catch((x: unknown) => x)) as { code: string; message: string };
    expect(e).toMatchObject({ code: 'consent_required' });
    expect(e.message).toMatch(
      /case output-flood \(from the case library\).*sandbox\.network "host".*--allow-network/,
    );
    expect(provider.configs).toHaveLength(0);
    await runCase(library, { ...caseEnv, consent: ['network'] });
    expect(provider.configs[0]).toMatchObject({ network: 'host' });
    await runCase({ ...bundled, task: wide }, caseEnv);
    expect(provider.configs.length).toBeGreaterThan(1);
  });

  it('a task within the defaults (lower limits included) needs no consent', async () => {
    const r = await recorded({
      limits: { memory: '512m', cpus: 0.5, pids: 64, disk: '100m', output: '64k' },
    });
    const before = r.provider.configs.length;
    for (const [name, run] of rebuilds(r, undefined))
      await expect(
        run().then(() => 'ran'),
        name,
      ).resolves.toBe('ran');
    // Every way made its sandbox, and each got the lower limits the task asked for.
    const made = r.provider.configs.slice(before);
    expect(made).toHaveLength(7);
    for (const c of made)
      expect(c).toMatchObject({
        network: 'none',
        limits: { cpus: 0.5, pids: 64, memoryBytes: 512 * 1024 ** 2, diskBytes: 100 * 1024 ** 2 },
      });
  });

  it('the user’s own episode forks in-session without asking again', async () => {
    env = tempHome();
    const provider = recordingProvider();
    const c = await startScripted(
      env,
      { task: memoryTask({ sandbox: { network: 'host' }, verifier: null }), supply: coldSupply(provider) },
      [call('execute_shell', { command: 'echo a' }), final('ok')],
    );
    await c.step();
    const f = await c.fork(1);
    expect(f.branch).not.toBe(c.branch);
    await f.dispose();
    await c.dispose();
  });

  it('classifies every widening field', () => {
    const kinds = (sandbox: TaskInput['sandbox']) =>
      widerThanDefaults(SandboxSpec.parse(sandbox)).map((w) => `${w.kind}:${w.field}`);
    expect(kinds({})).toEqual([]);
    expect(kinds({ network: 'bridge' })).toEqual(['network:sandbox.network']);
    expect(kinds({ image: 'stepbox-sandbox:0' })).toEqual(['image:sandbox.image']);
    expect(kinds({ limits: { cpus: 2 } })).toEqual(['limits:sandbox.limits.cpus']);
    expect(kinds({ limits: { disk: '2g' } })).toEqual(['limits:sandbox.limits.disk']);
    expect(kinds({ limits: { output: 2_000_000 } })).toEqual(['limits:sandbox.limits.output']);
    expect(kinds({ limits: { memory: '1024m' } })).toEqual([]);
  });

  it('mounts, privileges, capabilities, devices and users cannot be asked for at all', () => {
    for (const key of [
      'privileged',
      'mounts',
      'binds',
      'volumes',
      'cap_add',
      'devices',
      'security_opt',
      'user',
    ]) {
      const r = parseTask({ name: 't', goal: 'g', sandbox: { [key]: true } });
      expect(r.ok, key).toBe(false);
      if (!r.ok) expect(r.error.message).toContain(`sandbox.${key}: unknown key`);
    }
  });

  it('bundle import reports what the bundle asks for and runs nothing', async () => {
    const r = await recorded(WIDE);
    const file = join(env.dir, 'wide.stepbox');
    await exportBundle(env.store, r.done, file);
    const other = openEpisodeStore(join(env.dir, 'other-home'));
    const out = await importBundle(other, file);
    expect(out.asks.map((w) => [w.kind, w.field, w.asked])).toEqual([
      ['network', 'sandbox.network', 'host'],
      ['image', 'sandbox.image', 'attacker/image:latest'],
      ['limits', 'sandbox.limits.pids', 100000],
      ['limits', 'sandbox.limits.memory', '64g'],
    ]);
  });
});
