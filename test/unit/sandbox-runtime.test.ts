import { describe, expect, it } from 'vitest';
import { loadSandboxProgram, loadSandboxResource } from '../../electron/engine/sandbox/sandbox-resources.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { runtimeVolumeName } from '../../electron/engine/docker/runtime-volume.js';
import { rootPython } from '../../electron/engine/sandbox/root-exec.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import {
  MAIN_COMMAND,
  RUNTIME_LOADER,
  RUNTIME_MOUNT,
  RUNTIME_DIR,
  RUNTIME_PYTHON,
} from '../../electron/engine/sandbox/sandbox-runtime.js';
import { SANDBOX_IMAGE_VERSION } from '../../shared/constants.js';

describe("stepbox's sandbox runtime (any image)", () => {
  const spec = containerSpec(defaultSandboxConfig(), '{"pid":1}', undefined, undefined, runtimeVolumeName());

  it('is mounted read-only in every sandbox, one volume per stepbox image version', () => {
    expect(runtimeVolumeName()).toBe(`stepbox-runtime-${SANDBOX_IMAGE_VERSION}`);
    expect(spec.HostConfig!.Mounts).toContainEqual({
      Type: 'volume',
      Source: runtimeVolumeName(),
      Target: RUNTIME_MOUNT,
      ReadOnly: true,
    });
  });

  it("runs the container's main command from the runtime, not the image (which may have no sleep)", () => {
    expect(spec.Cmd).toEqual(MAIN_COMMAND);
    expect(MAIN_COMMAND[0]!.startsWith(`${RUNTIME_MOUNT}/`)).toBe(true);
  });

  it("starts root's python with the runtime's own loader and libraries, isolated", () => {
    const { cmd, options } = rootPython('print(1)');
    expect(cmd.slice(0, 5)).toEqual([
      RUNTIME_LOADER,
      '--inhibit-cache',
      '--library-path',
      `${RUNTIME_MOUNT}/runtime/lib`,
      RUNTIME_PYTHON,
    ]);
    expect(cmd.slice(5, 8)).toEqual(['-I', '-S', '-c']);
    expect(options.user).toBe('0:0');
  });

  it('is where the programs inside the sandbox look for it (one path on both sides)', () => {
    // Named once, in the prelude every program is sent with.
    expect(loadSandboxResource('prelude.py').toString('utf8')).toContain(`RUNTIME = '${RUNTIME_DIR}'`);
    for (const program of ['helper.py', 'verifier.py', 'bridge.py'] as const) {
      expect(loadSandboxProgram(program).toString('utf8'), program).toContain(`RUNTIME = '${RUNTIME_DIR}'`);
      expect(loadSandboxResource(program).toString('utf8'), program).not.toContain(`'${RUNTIME_DIR}'`);
    }
  });
});
