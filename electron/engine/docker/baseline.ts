import { spawn } from 'node:child_process';
import { SANDBOX_UID } from '../../../shared/constants.js';
import type { DockerEngine } from './client.js';
import { OWNER_LABEL, STEPBOX_LABEL } from './container-spec.js';
import { specForEngine } from './engine-flavour.js';
import { ownerLabel } from './owner.js';

/**
 * The plain Docker operations the sandbox engine is measured against (bench section
 * `sandbox`): a new `docker exec` per command, and `docker commit` of a container's
 * writable layer. Nothing else uses them; the engine itself never does either.
 */

/** Runs `cmd` by one `docker exec` (create, start, wait for the end, read the exit code), as `options.user` (the image's user when absent); resolves with the exit code. */
export async function rawExec(
  engine: DockerEngine,
  containerId: string,
  cmd: string[],
  options: { user?: string } = {},
): Promise<number> {
  const exec = await engine.docker
    .getContainer(containerId)
    .exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, Tty: false, User: options.user });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
    stream.resume();
  });
  const info = await exec.inspect();
  return info.ExitCode ?? -1;
}

/**
 * Starts a container of `image` with no network and no tmpfs — files written under its
 * /workspace land in the writable layer, as `docker commit` needs. It carries the
 * stepbox owner labels, so an orphan is swept like any sandbox; the caller removes it.
 * On Podman it gets the engine's adjustments too (explicit rlimits: without them it does
 * not start on a host without CAP_SYS_RESOURCE).
 */
export async function startLayerContainer(engine: DockerEngine, image: string): Promise<string> {
  const { kind } = await engine.info();
  const spec = specForEngine(
    {
      Image: image,
      Cmd: ['sleep', 'infinity'],
      User: `${SANDBOX_UID}:${SANDBOX_UID}`,
      WorkingDir: '/workspace',
      Labels: { [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel() },
      NetworkDisabled: true,
      HostConfig: { NetworkMode: 'none', Init: true, LogConfig: { Type: 'none', Config: {} } },
    },
    kind,
  );
  return engine.createAndStart(spec);
}

/** `docker commit` of a container; resolves with the new image id (remove it with {@link removeImage}). */
export async function commitContainer(engine: DockerEngine, containerId: string): Promise<string> {
  const res = (await engine.docker.getContainer(containerId).commit({ pause: true })) as { Id?: string };
  if (!res.Id) throw new Error(`docker commit of ${containerId.slice(0, 12)} returned no image id`);
  return res.Id;
}

/** Removes an image by id (a committed baseline). */
export async function removeImage(engine: DockerEngine, imageId: string): Promise<void> {
  await engine.docker.getImage(imageId).remove({ force: true });
}

/**
 * `tar -c DIR | docker cp - CONTAINER:PATH`: the folder streamed as a tar into the
 * container's filesystem by the engine's archive API (bench section `workspace`, against
 * which a project folder's import is measured). Resolves when the engine has extracted it.
 */
export async function copyFolderByTar(
  engine: DockerEngine,
  containerId: string,
  dir: string,
  path: string,
): Promise<void> {
  const tar = spawn('tar', ['-c', '-f', '-', '-C', dir, '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => tar.on('close', resolve));
  await engine.docker.getContainer(containerId).putArchive(tar.stdout, { path });
  const code = await exited;
  if (code !== 0) throw new Error(`tar of ${dir} exited ${String(code)}: ${stderr.trim()}`);
}
