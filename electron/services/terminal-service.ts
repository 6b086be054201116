import { randomUUID } from 'node:crypto';
import { logger } from '../engine/log.js';
import type { EpisodeController } from '../engine/harness/episode-controller.js';
import type { EpisodeManager } from './episode-manager.js';
import type { Audience, EventBus } from './event-bus.js';
import type { DockerPort, TerminalHandle } from './ports.js';
import { ServiceError } from './service-error.js';
import { GVISOR_RUNTIME } from '../engine/docker/runtime.js';
import type { HumanCommand } from '../engine/docker/terminal.js';

/** A command whose report could be forged: `why` goes with it as what stepbox could not tell. */
function unverified(c: HumanCommand, why: string): HumanCommand {
  const others = c.others ?? { processes: [], more: 0, episode: false };
  // The schema keeps 500 characters: this reason first, never the one cut.
  return {
    ...c,
    others: { ...others, unknown: (others.unknown ? `${why}; ${others.unknown}` : why).slice(0, 500) },
  };
}

const log = logger('terminals');

/** Above this many bytes sent but not yet acknowledged, output is held back… */
const HIGH_WATER = 512 * 1024;
/** …until the window has caught up to this many. */
const LOW_WATER = 64 * 1024;
/** Held-back output beyond this is dropped (oldest first) with a notice in the stream. */
const MAX_HELD = 8 * 1024 * 1024;

interface OpenTerminal {
  readonly handle: TerminalHandle;
  readonly branch: string;
  /** The controller whose sandbox it is in (it may go on in another branch after a rollback). */
  readonly controller: EpisodeController;
  readonly owner: Audience;
  /** Flow control starts with the window's first ack (a window that never acks is never throttled). */
  acking: boolean;
  unacked: number;
  held: string[];
  heldBytes: number;
  readonly off: (() => void)[];
}

/**
 * Live TTYs into sandboxes (`terminal.*`). Output is already batched by the engine;
 * here it is flow-controlled per terminal against the window's `terminal.ack`s, and
 * commands a person types are recorded in the branch's trace as `human_command`.
 */
export class TerminalService {
  private readonly terminals = new Map<string, OpenTerminal>();

  constructor(
    private readonly docker: DockerPort,
    private readonly episodes: EpisodeManager,
    private readonly bus: EventBus,
  ) {}

  /** True while a terminal is open into the branch's sandbox (a person is looking at it). */
  hasTerminal(branch: string): boolean {
    for (const t of this.terminals.values()) if (t.branch === branch) return true;
    return false;
  }

  async open(id: string, cols: number, rows: number, owner: Audience): Promise<string> {
    const controller = this.episodes.require(id);
    const sandbox = controller.sandbox();
    if (!sandbox) throw new ServiceError('sandbox_lost', `the sandbox of ${controller.branch} is gone`);
    const session = await sandbox.sessionState().catch(() => null);
    const handle = await this.docker.openTerminal(sandbox.id, {
      cols,
      rows,
      ...(session ? { cwd: session.cwd } : {}),
      ...(sandbox.config?.workdir ? { workdir: sandbox.config.workdir } : {}),
      // Each line asks the sandbox who else could write, so a person is credited only with what is theirs.
      ...(sandbox.writers ? { writers: (exclude?: number) => sandbox.writers!(exclude) } : {}),
    });
    // The shell's reports carry a key only it knows, while it is sealed: where the seal is void
    // (gVisor, fs.suid_dumpable = 1) a process of the agent's can read the key from the shell
    // and report a command of its choosing, its files and who else ran. Said on every command.
    const unsealed =
      sandbox.sealed === false
        ? `${sandbox.runtime === GVISOR_RUNTIME ? 'on gVisor' : 'on this host (fs.suid_dumpable = 1)'} the terminal's shell is not sealed, so a process of the agent's can read its report key and forge this command, its files and who else ran`
        : null;
    const terminal = `term-${randomUUID()}`;
    const t: OpenTerminal = {
      handle,
      branch: controller.branch,
      controller,
      owner,
      acking: false,
      unacked: 0,
      held: [],
      heldBytes: 0,
      off: [],
    };
    this.terminals.set(terminal, t);
    t.off.push(
      handle.onData((data) => this.output(terminal, t, data)),
      // Recorded by the controller whose sandbox this terminal is in, not by branch id: after a
      // rollback (or an open) the controller goes on in a new branch and the id it had is gone.
      handle.onCommand((c) => {
        const command = unsealed ? unverified(c, unsealed) : c;
        (controller as { recordHumanCommand?: (c: unknown) => void }).recordHumanCommand?.(command);
      }),
      // A step's snapshot waits for the commands the shell reported before it read the
      // workspace (their report asks the sandbox who else ran first): they are the step before's.
      (
        controller as { awaitHumanReports?: (pending: () => Promise<void> | null) => () => void }
      ).awaitHumanReports?.(() => handle.reporting?.() ?? null) ?? (() => undefined),
      handle.onExit((code) => {
        this.drop(terminal);
        this.bus.emit('terminal.exit', { terminal, code }, t.owner);
      }),
    );
    log.debug(`opened ${terminal} into ${sandbox.id.slice(0, 12)} for ${controller.branch}`);
    return terminal;
  }

  /** Writes what a person typed: activity on the branch (its idle time starts again). */
  input(terminal: string, data: string): void {
    const t = this.get(terminal);
    t.handle.write(data);
    this.episodes.noteActivity(t.controller);
  }

  async resize(terminal: string, cols: number, rows: number): Promise<void> {
    await this.get(terminal).handle.resize(cols, rows);
  }

  /** The window wrote `bytes` more of the output: release held output below the low-water mark. */
  ack(terminal: string, bytes: number): void {
    const t = this.get(terminal);
    t.acking = true;
    t.unacked = Math.max(0, t.unacked - bytes);
    if (t.unacked > LOW_WATER) return;
    while (t.held.length > 0 && t.unacked < HIGH_WATER) {
      const chunk = t.held.shift() ?? '';
      t.heldBytes -= chunk.length;
      this.send(terminal, t, chunk);
    }
  }

  /** Closes a terminal; `terminal.exit` follows (from the shell, or here if it never reports). */
  async close(terminal: string): Promise<void> {
    const t = this.get(terminal);
    await t.handle.close();
    if (this.drop(terminal))
      this.bus.emit('terminal.exit', { terminal, code: null, message: 'closed' }, t.owner);
  }

  /** Closes the terminals a connection opened (its socket closed), or all of them. */
  async closeOwned(owner: Audience | undefined): Promise<void> {
    const doomed = [...this.terminals.entries()].filter(([, t]) => owner === undefined || t.owner === owner);
    await Promise.all(
      doomed.map(([id]) =>
        this.close(id).catch((e: unknown) =>
          log.warn(`closing ${id}: ${e instanceof Error ? e.message : String(e)}`),
        ),
      ),
    );
  }

  private output(terminal: string, t: OpenTerminal, data: string): void {
    if (!t.acking || (t.unacked < HIGH_WATER && t.held.length === 0)) return this.send(terminal, t, data);
    t.held.push(data);
    t.heldBytes += data.length;
    let dropped = 0;
    while (t.heldBytes > MAX_HELD && t.held.length > 1) {
      const old = t.held.shift() ?? '';
      t.heldBytes -= old.length;
      dropped += old.length;
    }
    if (dropped > 0)
      t.held.unshift(`\r\n[stepbox: ${dropped} bytes of output dropped: the window fell behind]\r\n`);
  }

  private send(terminal: string, t: OpenTerminal, data: string): void {
    t.unacked += data.length;
    this.bus.emit('terminal.data', { terminal, data }, t.owner);
  }

  private get(terminal: string): OpenTerminal {
    const t = this.terminals.get(terminal);
    if (!t) throw new ServiceError('not_found', `no open terminal ${terminal} (it exited or was closed)`);
    return t;
  }

  private drop(terminal: string): OpenTerminal | undefined {
    const t = this.terminals.get(terminal);
    if (!t) return undefined;
    this.terminals.delete(terminal);
    for (const off of t.off) off();
    return t;
  }
}
