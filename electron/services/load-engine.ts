import { logger } from '../engine/log.js';
import { degradedPorts } from './degraded-ports.js';
import type { EnginePorts } from './ports.js';

const log = logger('services');

/**
 * The real engine's ports, loaded lazily: when a piece of the engine cannot load, the
 * window still opens, and every operation answers with what is wrong instead of the
 * process dying.
 */
export async function loadEnginePorts(home: string | undefined): Promise<EnginePorts> {
  try {
    const { engineServicesPorts } = await import('./engine-ports.js');
    return engineServicesPorts(home === undefined ? {} : { home });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    log.error(`the engine did not load (${why}); every operation will report it`);
    return degradedPorts(`the engine did not load: ${why}. Fix: npm run build`);
  }
}
