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

  it("says on every command that its report could be forged where the shell's seal is void (gVisor, fs.suid_dumpable = 1), and only there", async () => {
    const recordedOn = async (sandbox: Record<string, unknown>) => {
      const recorded: unknown[] = [];
      const controller = {
        branch: 'br',
        sandbox: () => ({ id: 'c1', sessionState: async () => ({ cwd: '/workspace' }), ...sandbox }),
        recordHumanCommand: (c: unknown) => recorded.push(c),
      };
      let onCommand: ((c: unknown) => void) | null = null;
      const handle = {
        write: () => undefined,
        resize: async () => undefined,
        onData: () => () => undefined,
        onCommand: (cb: (c: unknown) => void) => ((onCommand = cb), () => undefined),
        onExit: () => () => undefined,
        close: async () => undefined,
      };
      const docker = { openTerminal: async () => handle } as unknown as DockerPort;
      const episodes = { require: () => controller, find: () => controller } as unknown as EpisodeManager;
      const service = new TerminalService(docker, episodes, { emit: () => undefined } as unknown as EventBus);
      await service.open('br', 80, 24, undefined as never);
      onCommand!({ command: 'touch a', cwd: '/workspace', exit_code: 0 });
      onCommand!({
        command: 'touch b',
        cwd: '/workspace',
        exit_code: 0,
        others: { processes: [{ pid: 7, name: 'sleep' }], more: 0, episode: false },
      });
      return recorded as { command: string; others?: { unknown?: string; processes: unknown[] } }[];
    };
    const gvisor = await recordedOn({ runtime: 'runsc', sealed: false });
    const why =
      "on gVisor the terminal's shell is not sealed, so a process of the agent's can read its report key and forge this command, its files and who else ran";
    expect(gvisor.map((c) => c.others?.unknown)).toEqual([why, why]);
    expect(gvisor[1].others?.processes).toEqual([{ pid: 7, name: 'sleep' }]);
    const dumpable = await recordedOn({ runtime: null, sealed: false });
    expect(dumpable[0].others?.unknown).toMatch(
      /^on this host \(fs\.suid_dumpable = 1\) the terminal's shell is not sealed/,
    );
    // Sealed (runc), or a sandbox that does not say: nothing added.
    expect((await recordedOn({ runtime: null, sealed: true }))[0]).toEqual({
      command: 'touch a',
      cwd: '/workspace',
      exit_code: 0,
    });
    expect((await recordedOn({}))[0].others).toBeUndefined();
  });
});
