import { afterAll, beforeAll, describe, expect } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { ownedContainers } from '../../electron/engine/docker/owner.js';
import {
  createDockerProvider,
  type DockerSandboxProvider,
  type HelperChannelChoice,
} from '../../electron/engine/sandbox/docker-provider.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import type { SandboxSupply } from '../../electron/engine/sandbox/sandbox.js';
import type { EpisodeEnv } from '../../electron/engine/harness/episode-factory.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadTask, startEpisode } from '../../electron/engine/harness/index.js';
import type { EpisodeRunner } from '../../electron/engine/harness/episode-runner.js';
import { PROJECT_ROOT } from './cli.js';
import { tempHome } from './harness.js';

/** Why Docker tests cannot run here, or null when the daemon and the sandbox image are ready. */
async function dockerProblem(): Promise<string | null> {
  const engine = new DockerEngine();
  try {
    await engine.ping();
  } catch (e) {
    return (e as Error).message;
  }
  if (!(await engine.hasImage(SANDBOX_IMAGE)))
    return `the sandbox image ${SANDBOX_IMAGE} is missing; build it with \`npx stepbox image build\``;
  return null;
}

/**
 * Null when integration tests can use Docker; otherwise why not. Under CI=true a missing
 * daemon or image throws (the test file fails loudly instead of being skipped).
 */
export const dockerMissing: string | null = await (async () => {
  const problem = await dockerProblem();
  if (problem && process.env.CI === 'true')
    throw new Error(`Docker integration tests cannot run: ${problem}`);
  return problem;
})();

/**
 * `describe` for tests that need the Docker engine. Under CI=true a missing engine or
 * image has already thrown above (the file fails loudly); only a local run without
 * Docker skips these tests.
 */
export function describeDocker(name: string, tests: () => void): void {
  (dockerMissing === null ? describe : describe.skip)(name, tests);
}

/** Where test providers keep their helper sockets (never the user's $STEPBOX_HOME). */
export const TEST_RUN_DIR = join(tmpdir(), 'stepbox-test-run');

/**
 * A provider for one test file; pair with {@link closeTestProvider} in afterAll. `channel`
 * picks the helpers' channel (default: the socket where it can be had, as in use).
 */
export async function testProvider(channel?: HelperChannelChoice): Promise<DockerSandboxProvider> {
  // No sweep: parallel test files and a running `serve` own containers of their own.
  return createDockerProvider({ sweep: false, runDir: TEST_RUN_DIR, ...(channel ? { channel } : {}) });
}

/** Closes the provider and returns the containers this process still owns (should be none). */
export async function closeTestProvider(provider: DockerSandboxProvider | undefined): Promise<string[]> {
  if (provider) await provider.close();
  return ownedContainers(new DockerEngine());
}

/**
 * The Docker provider of a test file: opened before its tests (after the hooks registered
 * earlier, before those registered later) and, after them all, closed with no container of
 * this process left. Returns a getter, since the provider exists only once `beforeAll` ran.
 *
 * ```ts
 * const provider = useTestProvider();
 * beforeAll(async () => (sb = await provider().create(defaultSandboxConfig())));
 * ```
 */
export function useTestProvider(channel?: HelperChannelChoice): () => DockerSandboxProvider {
  let provider: DockerSandboxProvider | undefined;
  beforeAll(async () => {
    provider = await testProvider(channel);
  }, 60_000);
  afterAll(async () => {
    expect(await closeTestProvider(provider)).toEqual([]);
  });
  return () => {
    if (!provider)
      throw new Error('the test provider is opened in beforeAll: use it inside a hook or a test');
    return provider;
  };
}

/** What {@link useDockerHome} gives a test file; filled in by its `beforeAll`. */
export interface DockerHome {
  readonly provider: DockerSandboxProvider;
  /** A temp STEPBOX_HOME whose engine starts sandboxes on `provider`. */
  readonly env: ReturnType<typeof tempHome>;
  /** The engine's one sandbox supply. */
  readonly supply: SandboxSupply;
  /** What the harness factories take: the home's store and parts, and the supply. */
  readonly episode: EpisodeEnv;
}

/**
 * The Docker engine and a temp home for a test file's episodes: set up before its tests,
 * and after them the provider closed, no container of this process left, the home removed.
 */
export function useDockerHome(): DockerHome {
  const home = {} as { -readonly [K in keyof DockerHome]: DockerHome[K] };
  const provider = useTestProvider();
  beforeAll(async () => {
    home.provider = provider();
    home.env = tempHome(home.provider);
    home.supply = await home.env.engine.supply();
    home.episode = await home.env.engine.episodeEnv();
  }, 60_000);
  afterAll(() => home.env?.cleanup());
  return home;
}

/** The folder of an example agent (`resources/agents/NAME`): its task, model script and program. */
export function exampleDir(name: string): string {
  return resolve(PROJECT_ROOT, 'resources/agents', name);
}

/** Starts an example agent on its own task and scripted model (or `model`), in `home`. */
export async function startExample(
  home: DockerHome,
  name: string,
  command: string,
  model?: string,
): Promise<EpisodeRunner> {
  const dir = exampleDir(name);
  const t = loadTask(dir);
  if (!t.ok) throw new Error(t.error.message);
  return startEpisode({
    task: t.value,
    taskPath: join(dir, 'task.json'),
    agentSpec: `exec:${command}`,
    agentOptions: { model: model ?? `scripted:${join(dir, 'model.jsonl')}` },
    ...home.episode,
  });
}
