import { runDoctor } from '../engine/doctor.js';
import { projectRoot } from '../engine/docker/image.js';
import { dockerClient, dockerReachable } from '../engine/docker/ping.js';
import { openStats } from '../engine/docker/stats.js';
import { openTerminal } from '../engine/docker/terminal.js';
import { openEpisodeStore, stepboxHome } from '../engine/trace/episode-store.js';
import { join } from 'node:path';
import { fileCatalog } from './catalog.js';
import type { DockerPort, DoctorPort, EnginePorts, HarnessPort } from './ports.js';
import { ServiceError } from './service-error.js';
import { storeTracePort } from './trace-port.js';

/** Where the real engine lives: the store home and the bundled resources. */
export interface EngineOptions {
  /** The store home; default `$STEPBOX_HOME` or `~/.stepbox`. */
  readonly home?: string;
  /** The folder holding `tasks/` and `cases/`; default the project's `resources/`. */
  readonly resourcesDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

const unavailable = (what: string) => () =>
  Promise.reject(new ServiceError('internal', `${what}: the harness is not available in this build`));

/** The harness binding (episodes, reopen, replay, what-if). */
function harnessPort(): HarnessPort {
  return {
    start: unavailable('episode.start'),
    reopen: unavailable('episode.reopen'),
    replayVerify: unavailable('episode.replayVerify'),
    whatIf: unavailable('episode.whatIf'),
  };
}

function dockerPort(env: NodeJS.ProcessEnv): DockerPort {
  return {
    async status() {
      const r = await dockerReachable(dockerClient(), undefined, env);
      return { ok: r.ok, message: r.detail, fix: r.fix || null };
    },
    openTerminal: (containerId, options) => openTerminal(containerId, options),
    openStats: (containerId) => openStats(containerId),
  };
}

function doctorPort(env: NodeJS.ProcessEnv): DoctorPort {
  return {
    async run() {
      const report = await runDoctor(env);
      return {
        ok: report.ok,
        checks: report.checks.map((c) => ({ name: c.id, ok: c.ok, message: c.detail, fix: c.fix || null })),
      };
    },
  };
}

/** Binds the service ports to the real engine (Docker, the disk store, the harness). */
export function engineServicesPorts(options: EngineOptions): EnginePorts {
  const env = options.env ?? process.env;
  const store = openEpisodeStore(options.home ?? stepboxHome(env));
  return {
    harness: harnessPort(),
    traces: storeTracePort(store),
    docker: dockerPort(env),
    catalog: fileCatalog(options.resourcesDir ?? join(projectRoot(), 'resources')),
    doctor: doctorPort(env),
  };
}
