import { logger } from '../log.js';
import type { DockerEngine } from './client.js';

const log = logger('docker');

/**
 * Streams the engine's `oom` events for containers with `label`; calls `onOom` with the
 * container id. Returns a function that stops listening. The in-container cgroup counter
 * is the first signal (see helper.py); this one also works when the cgroup files are not
 * visible in the container.
 */
export async function watchOomEvents(
  engine: DockerEngine,
  label: string,
  onOom: (id: string) => void,
): Promise<() => void> {
  const stream = (await engine.docker.getEvents({
    filters: { type: ['container'], event: ['oom'], label: [label] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  // A listener must not keep a CLI process alive on its own.
  (stream as { socket?: { unref(): void } }).socket?.unref();
  let buf = '';
  stream.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      try {
        const id = (JSON.parse(line) as { id?: string }).id;
        if (id) onOom(id);
      } catch (e) {
        log.warn(`unreadable Docker event (${(e as Error).message}): ${line.slice(0, 200)}`);
      }
    }
  });
  stream.on('error', (e: Error) => log.warn(`the Docker event stream failed: ${e.message}`));
  return () => stream.destroy();
}
