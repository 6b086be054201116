import { describe, expect, it } from 'vitest';
import { TerminalService } from '../../electron/services/terminal-service.js';
import type { EpisodeManager } from '../../electron/services/episode-manager.js';
import type { EventBus } from '../../electron/services/event-bus.js';
import type { DockerPort, TerminalHandle } from '../../electron/services/ports.js';

// A command typed in the window's terminal is recorded by the controller whose sandbox the
// terminal is in. After a rollback (or an open) that controller goes on in a new branch: the
// branch id the terminal was opened with no longer finds it, and the command was lost.

describe('the terminal records what a person types, whatever branch the episode is on now', () => {
  it('a command after the controller moved to a new branch is recorded by it', async () => {
    const recorded: unknown[] = [];
    const controller = {
      branch: 'br-old',
      sandbox: () => ({ id: 'c1', sessionState: async () => ({ cwd: '/workspace' }) }),
      recordHumanCommand: (c: unknown) => recorded.push(c),
    };
    let onCommand: ((c: { command: string; cwd: string; exit_code: number }) => void) | null = null;
    const handle: TerminalHandle = {
      write: () => undefined,
      resize: async () => undefined,
      onData: () => () => undefined,
      onCommand: (cb) => ((onCommand = cb), () => undefined),
      onExit: () => () => undefined,
      close: async () => undefined,
    };
    const docker = { openTerminal: async () => handle } as unknown as DockerPort;
    // The manager as it is after a rollback was continued: the old id is not live any more.
    const episodes = {
      require: () => controller,
      find: (id: string) => (id === 'br-new' ? controller : null),
    } as unknown as EpisodeManager;
    const service = new TerminalService(docker, episodes, { emit: () => undefined } as unknown as EventBus);
    await service.open('br-old', 80, 24, undefined as never);
    controller.branch = 'br-new';
    onCommand!({ command: 'touch typed.txt', cwd: '/workspace', exit_code: 0 });
    expect(recorded).toEqual([{ command: 'touch typed.txt', cwd: '/workspace', exit_code: 0 }]);
  });
});
