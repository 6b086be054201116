import { posix } from 'node:path';
import type { DockerEngine } from '../docker/client.js';
import { OWNER_LABEL, STEPBOX_LABEL } from '../docker/container-spec.js';
import { ownerLabel } from '../docker/owner.js';
import { logger } from '../log.js';
import { seedOf, type SeedFile, type WorkspaceSeed } from './workspace-seed.js';

const log = logger('sandbox');

/**
 * The image's own files at `workdir`, as a seed for its sandboxes' workspaces (null when
 * there are none): read from the image's layers through a container that is never started
 * (a running sandbox's tmpfs hides them). At most `maxBytes` of content (the workspace's
 * size): more could not fit in it. Devices, fifos and sockets are left out, with a warning.
 */
export async function imageSeed(
  engine: DockerEngine,
  image: string,
  workdir: string,
  maxBytes: number,
): Promise<WorkspaceSeed | null> {
  const labels = { [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel() };
  const entries = await engine.readImagePath(image, workdir, labels, maxBytes);
  const base = posix.basename(workdir);
  const files: SeedFile[] = [];
  const contents = new Map<string, Buffer>();
  const left: string[] = [];
  for (const e of entries) {
    if (e.path !== base && !e.path.startsWith(base + '/')) continue;
    const rel = e.path.slice(base.length + 1);
    if (!rel) continue; // the working directory itself: the tmpfs is its own
    if (e.type === 'file') {
      contents.set(e.path, e.content);
      files.push({ path: rel, type: 'file', mode: e.mode, content: e.content });
    } else if (e.type === 'dir') files.push({ path: rel, type: 'dir', mode: e.mode });
    else if (e.type === 'symlink') files.push({ path: rel, type: 'symlink', mode: 0o777, target: e.target });
    else if (e.type === 'hardlink' && e.target !== undefined && contents.has(e.target))
      // A hard link is a second name for a file archived before it: a copy in the workspace.
      files.push({ path: rel, type: 'file', mode: e.mode, content: contents.get(e.target) });
    else left.push(rel);
  }
  if (left.length)
    log.warn(
      `${image}: ${left.length} entr${left.length === 1 ? 'y' : 'ies'} of ${workdir} left out of the workspace (not a file, folder or symlink): ${left.slice(0, 5).join(', ')}`,
    );
  return files.length ? seedOf(files) : null;
}
