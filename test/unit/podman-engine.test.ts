import { describe, expect, it } from 'vitest';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import {
  DOCKER_NONE_HOSTS,
  PODMAN_ULIMITS,
  prepareScript,
  specForEngine,
} from '../../electron/engine/docker/engine-flavour.js';
import {
  detectEngine,
  engineKindOf,
  hostFacts,
  limitsProblem,
  needsContainerInit,
  type EngineInfo,
} from '../../electron/engine/docker/engine-kind.js';
import { dockerFix } from '../../electron/engine/docker/ping.js';
import { engineCheck, sandboxStartFix } from '../../electron/engine/doctor.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { engineError } from '../../electron/engine/engine-error.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';

const PODMAN_VERSION = {
  Version: '4.3.1',
  ApiVersion: '1.41',
  Components: [{ Name: 'Podman Engine', Version: '4.3.1' }, { Name: 'Conmon' }],
};
const DOCKER_VERSION = { Version: '24.0.5', ApiVersion: '1.43', Components: [{ Name: 'Engine' }] };

function podman(rootless: boolean | null, cgroupVersion: 1 | 2 | null): EngineInfo {
  return { kind: 'podman', version: '4.3.1', apiVersion: '1.41', rootless, cgroupVersion };
}

describe('engine detection', () => {
  it('names Podman from /version Components[].Name, anything else Docker', () => {
    expect(engineKindOf(PODMAN_VERSION)).toBe('podman');
    expect(engineKindOf(DOCKER_VERSION)).toBe('docker');
    expect(engineKindOf({})).toBe('docker');
  });

  it("reads rootless and the cgroup version from libpod's /info and Docker's /info", () => {
    expect(hostFacts('podman', { host: { cgroupVersion: 'v1', security: { rootless: true } } })).toEqual({
      rootless: true,
      cgroupVersion: 1,
    });
    expect(
      hostFacts('docker', { CgroupVersion: '2', SecurityOptions: ['name=seccomp', 'name=rootless'] }),
    ).toEqual({ rootless: true, cgroupVersion: 2 });
    expect(hostFacts('podman', null)).toEqual({ rootless: null, cgroupVersion: null });
  });

  it('says limits would not hold only for rootless on cgroup v1', () => {
    expect(limitsProblem(podman(true, 1))).toMatch(/rootless on a cgroup v1 host/);
    expect(limitsProblem(podman(true, 2))).toBeNull();
    expect(limitsProblem(podman(false, 1))).toBeNull();
    expect(limitsProblem(podman(null, null))).toBeNull();
  });
});

describe('the sandbox spec on Podman', () => {
  const base = containerSpec(defaultSandboxConfig(), '{"pid":1}');

  it('is unchanged on Docker', () => {
    expect(specForEngine(base, 'docker')).toBe(base);
  });

  it('has no uid=/gid= tmpfs options (Podman refuses them), no copy-up, a read-only /var/tmp and explicit nofile/nproc', () => {
    const spec = specForEngine(base, 'podman');
    const tmpfs = spec.HostConfig?.Tmpfs ?? {};
    for (const [path, options] of Object.entries(tmpfs)) {
      expect(options, path).not.toMatch(/(^|,)(uid|gid)=/);
      expect(options, path).toMatch(/(^|,)notmpcopyup(,|$)/);
    }
    // Sizes and modes kept from the Docker spec.
    expect(tmpfs['/workspace']).toMatch(/size=\d+/);
    expect(tmpfs['/workspace']).toMatch(/(^|,)exec(,|$)/);
    expect(tmpfs['/home/agent']).toMatch(/mode=0755/);
    expect(tmpfs['/var/tmp']).toMatch(/^ro,/);
    expect(spec.HostConfig?.Ulimits).toEqual(PODMAN_ULIMITS);
    // The rest of the security defaults are the Docker spec's.
    expect(spec.HostConfig?.CapDrop).toEqual(['ALL']);
    expect(spec.HostConfig?.ReadonlyRootfs).toBe(true);
    expect(spec.HostConfig?.PidsLimit).toBe(base.HostConfig?.PidsLimit);
    expect(spec.HostConfig?.Memory).toBe(base.HostConfig?.Memory);
  });

  it("hands /workspace and $HOME to uid 1000 and writes Docker's /etc/hosts for network none, before the helper", () => {
    expect(prepareScript('docker', 'none')).toBeNull();
    const script = prepareScript('podman', 'none') ?? '';
    expect(script).toMatch(/chown 1000:1000 \/workspace \/home\/agent/);
    expect(script).toContain(DOCKER_NONE_HOSTS);
    expect(script.indexOf('remount,rw')).toBeLessThan(script.indexOf('remount,ro'));
    expect(DOCKER_NONE_HOSTS).not.toMatch(/host\.containers\.internal|host\.docker\.internal/);
    expect(prepareScript('podman', 'bridge')).not.toMatch(/hosts/);
  });
});

describe('doctor on Podman', () => {
  const reach = (engine: EngineInfo) => ({ ok: true, detail: 'Podman 4.3.1 at unix:///x', fix: '', engine });

  it('refuses rootless Podman on cgroup v1 with the reason and the fix', () => {
    const check = engineCheck(reach(podman(true, 1)), {});
    expect(check.ok).toBe(false);
    expect(check.detail).toMatch(/cgroup v1.*refuses/);
    expect(check.fix).toMatch(/rootful|cgroup v2/);
    expect(check.fix).toMatch(/STEPBOX_ALLOW_UNENFORCED_LIMITS=1/);
  });

  it('lets it pass only with the explicit option, and says so', () => {
    const check = engineCheck(reach(podman(true, 1)), { STEPBOX_ALLOW_UNENFORCED_LIMITS: '1' });
    expect(check.ok).toBe(true);
    expect(check.detail).toMatch(/allowed by STEPBOX_ALLOW_UNENFORCED_LIMITS=1/);
    expect(engineCheck(reach(podman(false, 1)), {}).ok).toBe(true);
  });

  it("names Podman's own fixes", () => {
    const fix = dockerFix({ DOCKER_HOST: 'unix:///run/user/1000/podman/podman.sock' }, 'ENOENT');
    expect(fix).toMatch(/systemctl --user enable --now podman\.socket/);
    expect(fix).toContain('DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock');
    expect(
      sandboxStartFix('(HTTP code 500) server error - container-init binary not found on the host'),
    ).toMatch(/apt-get install catatonit/);
    expect(needsContainerInit('no such image')).toBe(false);
  });

  it('maps a refused engine to exit 3 with its own fix', () => {
    const mapped = engineError(new SandboxFailure('limits_unenforced', 'rootless on v1', 'run rootful'));
    expect(mapped).toEqual({ code: 'limits_unenforced', message: 'rootless on v1', fix: 'run rootful' });
  });
});

describe('detectEngine', () => {
  /** A dockerode stand-in answering GET paths from a table (404 for the rest) and /version. */
  function fakeDocker(paths: Record<string, unknown>, version: object | null) {
    return {
      modem: {
        dial(opts: { path: string }, cb: (err: unknown, data?: unknown) => void) {
          if (opts.path in paths) cb(null, paths[opts.path]);
          else cb(Object.assign(new Error('(HTTP code 404) not found'), { statusCode: 404 }));
        },
      },
      version: async () => {
        if (!version) throw new Error('/version must not be asked');
        return version;
      },
    } as unknown as import('dockerode');
  }

  it("knows Podman by libpod's ping and reads libpod /info, without its slow /version", async () => {
    const docker = fakeDocker(
      {
        '/v4.0.0/libpod/_ping': 'OK',
        '/v4.0.0/libpod/info': {
          host: { cgroupVersion: 'v1', security: { rootless: true } },
          version: { Version: '4.3.1', APIVersion: '4.3.1' },
        },
      },
      null,
    );
    expect(await detectEngine(docker)).toEqual({
      kind: 'podman',
      version: '4.3.1',
      apiVersion: 'libpod 4.3.1',
      rootless: true,
      cgroupVersion: 1,
    });
  });

  it("asks Docker's /version and /info otherwise", async () => {
    const docker = fakeDocker(
      { '/info': { CgroupVersion: '2', SecurityOptions: ['name=seccomp'] } },
      DOCKER_VERSION,
    );
    expect(await detectEngine(docker)).toEqual({
      kind: 'docker',
      version: '24.0.5',
      apiVersion: '1.43',
      rootless: false,
      cgroupVersion: 2,
    });
  });
});
