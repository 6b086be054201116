import { beforeAll, expect, it } from 'vitest';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import { useTestProvider, describeDocker } from '../support/docker.js';

// One sandbox for every read-only check: none of them changes what the others look at.
describeDocker('docker sandbox isolation', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;
  const run = async (command: string) => {
    const r = await sb.exec({ command, timeoutMs: 20_000 });
    expect(r.error).toBeUndefined();
    return r;
  };

  beforeAll(async () => {
    sb = await provider().create(defaultSandboxConfig());
  });

  it('has only the loopback interface', async () => {
    const r = await run(
      'ls /sys/class/net; python3 -c "print(open(\'/proc/net/dev\').read().split(chr(10))[2:])"',
    );
    const [ifaces] = r.stdout!.split('[');
    expect(ifaces.trim().split(/\s+/)).toEqual(['lo']);
    expect(r.stdout).toContain("'    lo:");
    expect(r.stdout!.match(/'\s+\w+:/g)).toHaveLength(1);
  });

  it('cannot write the root filesystem or outside /workspace, /tmp and $HOME', async () => {
    const r = await run(
      'for d in / /etc /usr /var /opt /root /srv; do touch $d/.probe 2>/dev/null && echo "writable $d"; done; ' +
        'touch /workspace/ok /tmp/ok "$HOME/ok" && echo tmpfs-ok',
    );
    expect(r.stdout).toBe('tmpfs-ok\n');
  });

  it('does not run as root and has no capabilities', async () => {
    const r = await run(
      'id -u; id -g; grep -E "^Cap(Eff|Prm|Inh|Amb):" /proc/self/status; grep NoNewPrivs /proc/self/status',
    );
    const lines = r.stdout!.trim().split('\n');
    expect(Number(lines[0])).toBe(1000);
    expect(Number(lines[1])).toBe(1000);
    for (const cap of lines.slice(2, 6)) expect(cap).toMatch(/:\s+0{16}$/);
    expect(lines[6]).toMatch(/NoNewPrivs:\s+1/);
  });

  it('has no Docker socket', async () => {
    const r = await run(
      'ls -la /var/run/docker.sock /run/docker.sock 2>&1; find / -xdev -name "docker.sock" 2>/dev/null | wc -l',
    );
    expect(r.stdout).toMatch(/No such file or directory[\s\S]*No such file or directory/);
    expect(r.stdout!.trim().split('\n').pop()).toBe('0');
  });

  it('has a fixed hostname and environment', async () => {
    const r = await run('hostname; echo "$HOME $TZ $LANG $USER"');
    expect(r.stdout).toBe('sandbox\n/home/agent UTC C.UTF-8 agent\n');
  });

  it('refuses a network the engine does not have, naming the daemon setting', async () => {
    const failure = await provider()
      .create({ ...defaultSandboxConfig(), network: 'bridge' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(SandboxFailure);
    expect(failure).toMatchObject({ code: 'network_unavailable' });
    expect((failure as Error).message).toMatch(/--bridge=none/);
  });
});
