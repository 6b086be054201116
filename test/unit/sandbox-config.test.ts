import { describe, expect, it } from 'vitest';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { configKey, defaultSandboxConfig, sandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { SandboxSpec } from '../../shared/task.js';

describe('sandbox config from a task', () => {
  it('converts Docker sizes to bytes and fills the defaults', () => {
    const config = sandboxConfig(
      SandboxSpec.parse({
        network: 'lab',
        limits: { cpus: 0.5, memory: '512m', disk: '100m', output: '64k' },
      }),
    );
    expect(config).toEqual({
      image: 'stepbox-sandbox:1',
      network: 'lab',
      limits: {
        cpus: 0.5,
        memoryBytes: 512 * 2 ** 20,
        pids: 256,
        diskBytes: 100 * 2 ** 20,
        outputBytes: 65536,
      },
    });
    expect(defaultSandboxConfig().limits).toEqual({
      cpus: 1,
      memoryBytes: 2 ** 30,
      pids: 256,
      diskBytes: 2 ** 30,
      outputBytes: 2 ** 20,
    });
  });

  it('limits.home sizes the $HOME tmpfs (default 512m), counted in the memory cgroup and the warm-pool key', () => {
    const home = sandboxConfig(SandboxSpec.parse({ limits: { memory: '256m', disk: '64m', home: '1g' } }));
    expect(home.limits.homeBytes).toBe(2 ** 30);
    const spec = containerSpec(home, '{"pid":1}');
    expect(spec.HostConfig?.Tmpfs?.['/home/agent']).toMatch(new RegExp(`size=${2 ** 30},`));
    expect(spec.HostConfig?.Memory).toBe((256 + 64 + 64 + 1024) * 2 ** 20);
    const plain = containerSpec(defaultSandboxConfig(), '{"pid":1}');
    expect(plain.HostConfig?.Tmpfs?.['/home/agent']).toMatch(new RegExp(`size=${512 * 2 ** 20},`));
    expect(configKey(home)).not.toBe(
      configKey(sandboxConfig(SandboxSpec.parse({ limits: { memory: '256m', disk: '64m' } }))),
    );
  });

  it('keys warm pools by image, network and every limit', () => {
    expect(configKey(defaultSandboxConfig())).toBe(configKey(defaultSandboxConfig()));
    expect(configKey(defaultSandboxConfig({ pids: 64 }))).not.toBe(configKey(defaultSandboxConfig()));
  });
});

describe('container spec', () => {
  const spec = containerSpec(defaultSandboxConfig({ memory: '256m', disk: '64m' }), '{"pid":1}');

  it('applies the security defaults', () => {
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      Init: true,
      CapDrop: ['ALL'],
      // Only what the helper needs to be another user than the agent (root, no other power)
      // and to empty the agent's bounding set.
      CapAdd: ['SETUID', 'SETGID', 'KILL', 'SETPCAP'],
      SecurityOpt: ['no-new-privileges'],
      // The memory limit plus the tmpfs sizes (workspace 64m, /tmp 64m, $HOME 64m): a full
      // /workspace is ENOSPC, not an OOM kill.
      // memory + /workspace + /tmp + $HOME (limits.home, default 512m): tmpfs pages are memory.
      Memory: (256 + 64 + 64 + 512) * 2 ** 20,
      MemorySwap: (256 + 64 + 64 + 512) * 2 ** 20,
      NanoCpus: 1e9,
      PidsLimit: 256,
      Privileged: false,
      Binds: [],
    });
    // The main process and the helper are root; every command runs as 1000 (helper.py).
    expect(spec.User).toBe('0:0');
    expect(spec.Hostname).toBe('sandbox');
    expect(spec.Cmd).toEqual(['sleep', 'infinity']);
    expect(spec.Env).toEqual(expect.arrayContaining(['HOME=/home/agent', 'TZ=UTC', 'LANG=C.UTF-8']));
    expect(JSON.stringify(spec)).not.toContain('docker.sock');
  });

  it('mounts /workspace as a size-limited executable tmpfs of the sandbox user, plus /tmp and $HOME', () => {
    const tmpfs = spec.HostConfig!.Tmpfs!;
    expect(tmpfs['/workspace']).toBe(`rw,exec,size=${64 * 2 ** 20},uid=1000,gid=1000,mode=0755`);
    expect(tmpfs['/tmp']).toMatch(/^rw,exec,nosuid,size=\d+,mode=1777$/);
    expect(tmpfs['/home/agent']).toMatch(/uid=1000,gid=1000/);
  });

  it('labels the container with its owner', () => {
    expect(spec.Labels).toEqual({ stepbox: '1', 'stepbox.owner': '{"pid":1}' });
  });
});
