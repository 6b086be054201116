import { describe, expect, it } from 'vitest';
import { consentMessage, widerThanDefaults, withoutConsent } from '../../shared/isolation-policy.js';
import { parseTask, SandboxSpec } from '../../shared/task.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { describeRuntimes, runtimesOf, type EngineInfo } from '../../electron/engine/docker/engine-kind.js';
import { specForRuntime } from '../../electron/engine/docker/gvisor.js';
import { checkRuntime, effectiveRuntime, runtimeRefused } from '../../electron/engine/docker/runtime.js';
import { configKey, defaultSandboxConfig, sandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import { consentFromFlags } from '../../electron/cli/consent-flags.js';
import { runtimeFlag, withRuntime } from '../../electron/cli/runtime-flag.js';
import { UsageError } from '../../electron/cli/command.js';
import { consentedTask } from '../../electron/engine/harness/recorded-task.js';

const DOCKER: EngineInfo = {
  kind: 'docker',
  version: '20.10.24',
  apiVersion: '1.41',
  rootless: false,
  cgroupVersion: 1,
  runtimes: { names: ['runc', 'runsc'], default: 'runc' },
};

function failure(f: () => unknown): SandboxFailure {
  try {
    f();
  } catch (e) {
    if (e instanceof SandboxFailure) return e;
    throw e;
  }
  throw new Error('expected a SandboxFailure');
}

describe('sandbox.runtime', () => {
  it('is passed to the engine as HostConfig.Runtime, and keeps warm sandboxes of other runtimes apart', () => {
    const config = sandboxConfig(SandboxSpec.parse({ runtime: 'runsc' }));
    expect(config.runtime).toBe('runsc');
    expect(containerSpec(config, 'owner').HostConfig?.Runtime).toBe('runsc');
    expect(containerSpec(defaultSandboxConfig(), 'owner').HostConfig).not.toHaveProperty('Runtime');
    expect(configKey(config)).not.toBe(configKey(defaultSandboxConfig()));
  });

  it('is a runtime name, not any string', () => {
    expect(SandboxSpec.safeParse({ runtime: 'runsc' }).success).toBe(true);
    expect(SandboxSpec.safeParse({ runtime: '../runsc' }).success).toBe(false);
    expect(SandboxSpec.safeParse({ runtime: '' }).success).toBe(false);
    expect(() => runtimeFlag('run sc')).toThrow(UsageError);
    expect(runtimeFlag('runsc')).toBe('runsc');
    const task = parseTask({ name: 't', goal: 'g' }, 'test');
    if (!task.ok) throw new Error(task.error.message);
    expect(withRuntime(task.value, 'runsc').sandbox.runtime).toBe('runsc');
    expect(withRuntime(task.value, undefined)).toBe(task.value);
  });
});

describe('the runtimes an engine offers', () => {
  it("are Docker's /info Runtimes without containerd's shim names, with the default", () => {
    const runtimes = runtimesOf('docker', {
      Runtimes: { 'io.containerd.runc.v2': {}, runc: {}, runsc: { path: '/usr/bin/runsc' } },
      DefaultRuntime: 'runc',
    });
    expect(runtimes).toEqual({ names: ['runc', 'runsc'], default: 'runc' });
    expect(describeRuntimes(runtimes!)).toBe('runc (default), runsc');
    expect(runtimesOf('docker', {})).toBeUndefined();
    expect(runtimesOf('podman', { host: { ociRuntime: { name: 'crun' } } })).toEqual({
      names: [],
      default: 'crun',
    });
  });

  it('a runtime the engine lacks is refused naming those it offers, never replaced by another', () => {
    expect(() => checkRuntime(DOCKER, undefined)).not.toThrow();
    expect(() => checkRuntime(DOCKER, 'runsc')).not.toThrow();
    const kata = failure(() => checkRuntime(DOCKER, 'kata'));
    expect(kata.code).toBe('runtime_unavailable');
    expect(kata.message).toMatch(
      /runtime "kata", which Docker does not offer \(it offers runc \(default\), runsc\)/,
    );
    const noGvisor = failure(() =>
      checkRuntime({ ...DOCKER, runtimes: { names: ['runc'], default: 'runc' } }, 'runsc'),
    );
    expect(noGvisor.fix).toMatch(/apt-get install runsc/);
    // An engine that lists none (Podman) judges the name itself; its refusal reads the same.
    const podman: EngineInfo = { ...DOCKER, kind: 'podman', runtimes: { names: [], default: 'crun' } };
    expect(() => checkRuntime(podman, 'runsc')).not.toThrow();
    expect(runtimeRefused(podman, 'runsc', 'unknown runtime specified runsc')?.code).toBe(
      'runtime_unavailable',
    );
    expect(runtimeRefused(podman, 'runsc', 'no such image')).toBeNull();
    expect(effectiveRuntime(DOCKER, undefined)).toBe('runc');
    expect(effectiveRuntime(DOCKER, 'runsc')).toBe('runsc');
  });
});

describe('a recorded runtime and consent', () => {
  const recorded = (runtime?: string) => SandboxSpec.parse(runtime ? { runtime } : {});

  it('gVisor narrows isolation: a recorded task may ask for it without consent', () => {
    expect(widerThanDefaults(recorded('runsc'))).toEqual([]);
    expect(widerThanDefaults(recorded())).toEqual([]);
  });

  it('any other runtime changes isolation in ways stepbox cannot judge: it needs --allow-runtime', () => {
    const widened = widerThanDefaults(recorded('runc'));
    expect(widened).toEqual([
      { kind: 'runtime', field: 'sandbox.runtime', asked: 'runc', default: "the engine's default" },
    ]);
    expect(consentMessage('the task recorded in b1', widened)).toMatch(/--allow-runtime/);
    expect(withoutConsent(widened, consentFromFlags({ 'allow-runtime': true }))).toEqual([]);
    expect(withoutConsent(widened, consentFromFlags({ 'allow-network': true }))).toHaveLength(1);
    expect(consentFromFlags({ 'trust-recorded-task': true })).toContain('runtime');
    const task = parseTask({ name: 't', goal: 'g', sandbox: { runtime: 'crun' } }, 'test');
    if (!task.ok) throw new Error(task.error.message);
    expect(() => consentedTask(task.value, 'the task recorded in b1')).toThrow(/sandbox.runtime "crun"/);
    expect(consentedTask(task.value, 'b1', ['runtime'])).toBe(task.value);
  });
});

describe('the container on gVisor', () => {
  const spec = containerSpec(defaultSandboxConfig({ pids: 64 }), 'owner');

  it("bounds the agent's processes inside (nproc) and gives the Sentry room on the host", () => {
    const g = specForRuntime(spec, 'runsc').HostConfig!;
    expect(g.Ulimits).toEqual([{ Name: 'nproc', Soft: 64, Hard: 64 }]);
    expect(g.PidsLimit).toBeGreaterThan(8 * 64);
    expect(g.Memory).toBeGreaterThan(spec.HostConfig!.Memory!);
    expect(g.MemorySwap).toBe(g.Memory);
    // Everything else is the sandbox as on runc.
    expect({
      ...g,
      Ulimits: undefined,
      PidsLimit: undefined,
      Memory: undefined,
      MemorySwap: undefined,
    }).toEqual({
      ...spec.HostConfig,
      Ulimits: undefined,
      PidsLimit: undefined,
      Memory: undefined,
      MemorySwap: undefined,
    });
  });

  it("is left as it is on runc (nproc there would count the host user's processes)", () => {
    expect(specForRuntime(spec, 'runc')).toBe(spec);
    expect(specForRuntime(spec, null)).toBe(spec);
  });
});
