import type { AgentInstalled, AgentProgress, AgentView } from '../../shared/contract/index.js';
import type { AgentsPort, InstallProgress } from './agents-port.js';
import type { EventBus } from './event-bus.js';
import { ServiceError } from './service-error.js';

/**
 * Where each phase of an install sits on the progress bar. npm says no total, so the bar is
 * an estimate: each line of a phase moves it part of the way to the phase's end, and only
 * `done` reaches 100.
 */
const RANGES: Record<InstallProgress['phase'], readonly [number, number]> = {
  runtime: [2, 35],
  package: [35, 92],
  files: [92, 99],
  done: [100, 100],
};

/** The Agents panel's operations: list, install (one at a time per agent, cancellable), remove. */
export class AgentsService {
  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly port: AgentsPort | undefined,
    private readonly bus: EventBus,
  ) {}

  list(): { agents: AgentView[] } {
    return {
      agents: this.agents()
        .list()
        .map((a) => ({
          name: a.name,
          description: a.description,
          pinned: a.pinned,
          runtime: a.runtime,
          recipe_hash: a.recipe_hash,
          own: a.own,
          installed: a.installed.map((i) => ({
            version: i.version,
            bytes: i.bytes,
            up_to_date: i.up_to_date,
            runtime: i.runtime,
          })),
          installing: this.running.has(a.name),
        })),
    };
  }

  async install(name: string): Promise<AgentInstalled> {
    const port = this.agents();
    if (this.running.has(name))
      throw new ServiceError('busy', `${name} is being installed already: wait for it, or Cancel it`);
    const controller = new AbortController();
    this.running.set(name, controller);
    let phase: InstallProgress['phase'] | null = null;
    let percent = 0;
    let lines = 0;
    const emit = (p: AgentProgress) => this.bus.emit('agents.progress', p);
    try {
      emit({ name, phase: 'runtime', percent: 0, message: `installing ${name}…` });
      const done = await port.install(
        name,
        (p) => {
          if (p.phase !== phase) {
            phase = p.phase;
            lines = 0;
          }
          lines += 1;
          const [from, to] = RANGES[p.phase];
          // Never backwards: a phase that starts below the bar (no runtime to fetch) waits.
          percent = Math.max(percent, from + (to - from) * (1 - 0.8 ** lines));
          emit({ name, phase: p.phase, percent: Math.round(percent), message: p.message.slice(0, 300) });
        },
        controller.signal,
      );
      emit({ name, phase: 'done', percent: 100, message: `${done.action} ${done.name}@${done.version}` });
      return {
        name: done.name,
        version: done.version,
        bytes: done.bytes,
        action: done.action,
        differs: [...done.differs],
      };
    } catch (e) {
      throw installError(name, e);
    } finally {
      this.running.delete(name);
    }
  }

  cancel(name: string): { cancelled: boolean } {
    const controller = this.running.get(name);
    controller?.abort();
    return { cancelled: controller !== undefined };
  }

  remove(name: string): { removed: string[] } {
    if (this.running.has(name))
      throw new ServiceError('busy', `${name} is being installed: Cancel the install first, then Remove`);
    return { removed: this.agents().remove(name) };
  }

  /** Cancels every running install (the window closes): each leaves nothing behind. */
  dispose(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  private agents(): AgentsPort {
    if (!this.port)
      throw new ServiceError('busy', 'installing agents needs the engine, which is not available here');
    return this.port;
  }
}

/**
 * An install's failure as a code and a message a person can act on: npm unreachable, the
 * disk full, npm missing; a cancel is `cancelled`; a bad recipe keeps the engine's mapping.
 */
function installError(name: string, e: unknown): unknown {
  const failure = e as { endReason?: unknown; message?: unknown } | null;
  const reason = typeof failure?.endReason === 'string' ? failure.endReason : null;
  const message = typeof failure?.message === 'string' ? failure.message : String(e);
  if (reason === 'cancelled') return new ServiceError('cancelled', message);
  if (reason !== 'install_failed') return e;
  if (/ENOSPC|no space left/i.test(message))
    return new ServiceError(
      'internal',
      `cannot install ${name}: the disk holding the store is full (ENOSPC); free some space (npx stepbox gc removes what crashed runs left) and Add again`,
    );
  if (/ENOENT.*\bnpm\b|spawn npm/i.test(message))
    return new ServiceError(
      'not_found',
      `cannot install ${name}: npm is not on the PATH of stepbox; install Node.js with npm, then Add again`,
    );
  if (/ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network/i.test(message))
    return new ServiceError(
      'network_unavailable',
      `cannot install ${name}: npm cannot reach its registry (${tail(message)}); check the network or npm's registry and proxy settings (npm config get registry), then Add again`,
    );
  return new ServiceError('internal', message);
}

/** The last line of npm's complaint, short enough for a notice. */
function tail(message: string): string {
  const lines = message.split('\n').filter((l) => l.trim());
  return (lines.at(-1) ?? message).trim().slice(0, 200);
}
