import { isUtf8 } from 'node:buffer';
import { workdirOf } from '../../../shared/workdir.js';
import { ToolErrorCode, type ToolError } from '../../../shared/errors.js';
import { err, ok, type Result } from '../../../shared/result.js';
import { toolFailure, type DirEntry, type ToolResult } from '../../../shared/tool-result.js';
import type { DockerEngine, ExecStreams } from '../docker/client.js';
import { keptName } from '../docker/container-spec.js';
import { runtimeVolumeName } from '../docker/runtime-volume.js';
import { GVISOR_RUNTIME } from '../docker/runtime.js';
import { isGvisor } from '../docker/gvisor.js';
import type { OomEvents } from '../docker/oom.js';
import { logger } from '../log.js';
import { diffEntries, manifestProblem } from './manifest.js';
import { BlobChanged } from './blob-transfer.js';
import {
  runVerifierExec,
  runVerifierInHelper,
  startVerifierRunner,
  type VerifierRunner,
} from './docker-verifier.js';
import { rootPython } from './root-exec.js';
import { RUNTIME_LOADER, RUNTIME_MOUNT } from './sandbox-runtime.js';
import { loadHelperSource } from './sandbox-resources.js';
import { HelperClosed, HelperError, type HelperClient } from './helper-client.js';
import {
  bootConfig,
  connectHelper,
  describeChannel,
  type ChannelOffer,
  type HelperChannel,
  type HelperConnection,
} from './helper-channel.js';
import type { HelperOp, HelperRequest, HelperResponse } from './helper-protocol.js';
import { captureWorkspace, restoreWorkspace, type HelperTree } from './snapshot-wire.js';
import { startInsideAgent } from './inside-agent-bridge.js';
import { emptySeed, type WorkspaceSeed } from './workspace-seed.js';
import {
  SandboxFailure,
  type ExecRequest,
  type InsideAgentRequest,
  type InsideAgentRun,
  type RestoreInfo,
  type Sandbox,
  type SandboxConfig,
  type SessionState,
  type SnapshotInfo,
  type SnapshotOptions,
  type VerifierRequest,
  type VerifierRun,
  type VerifyMode,
  type Writers,
} from './sandbox.js';
import {
  SnapshotCorruptError,
  type ManifestEntry,
  type SnapshotManifest,
  type SnapshotStore,
} from './snapshot-store.js';

const log = logger('sandbox');

/** How long the helper may take to say hello after its exec starts. */
const HELLO_TIMEOUT_MS = 15_000;
/**
 * How long a SIGKILLed command waits for Docker's `oom` event when the helper could not read
 * the cgroup counter (the event is relayed asynchronously and may trail the answer).
 */
const OOM_EVENT_WAIT_MS = 1_000;
/** How long letting a verifier runner go waits for it to exit before closing its exec. */
const DROP_WAIT_MS = 5_000;
/** Extra time the host waits past a call's own timeout before declaring the helper hung. */
const HUNG_GRACE_MS = 15_000;

/**
 * Files larger than this are not captured by a snapshot: they are recorded as skipped with
 * a warning (a rollback leaves them as they are; a fork or replay starts without them).
 * Blobs stream in chunks, so the cap is about store size, not memory.
 */
export const SNAPSHOT_FILE_CAP_BYTES = 512 * 1024 * 1024;
/** read_file returns at most this much (the helper's MAX_READ); larger files are for commands. */
const MAX_READ_BYTES = 64 * 1024 * 1024;

/**
 * The helper's one exec: a tiny stub for the runtime's python3, started isolated as root (see root-exec.ts),
 * that reads exactly N bytes of source and M bytes of boot configuration (the socket to use
 * and its token, helper-channel.ts) from stdin and runs the source; the same stdin then
 * carries the protocol, unless the helper moved it to the socket. Never in argv: the agent
 * can read every process's command line.
 */
function bootstrapExec(sourceLength: number, bootLength: number): ReturnType<typeof rootPython> {
  const stub = [
    'import os, sys',
    `n = ${sourceLength + bootLength}`,
    'b = b""',
    'while len(b) < n:',
    '    c = os.read(0, n - len(b))',
    '    if not c: sys.exit(70)',
    '    b += c',
    `STEPBOX_BOOT = b[${sourceLength}:]`,
    `exec(compile(b[:${sourceLength}], "stepbox-helper", "exec"))`,
  ].join('\n');
  return rootPython(stub);
}

/**
 * What an engine's words say when the helper's exec could not run its program at all (the
 * runtime's loader missing or of another architecture), plainly; '' for any other failure.
 */
function execProblem(text: string): string {
  if (/exec format error/i.test(text))
    return `: the engine could not run ${RUNTIME_LOADER} (exec format error: stepbox's runtime is for another architecture than this image or engine)`;
  if (/(OCI runtime exec failed|exec failed|executable file not found|no such file or directory)/i.test(text))
    return `: the engine could not start ${RUNTIME_LOADER}, stepbox's runtime (its volume ${RUNTIME_MOUNT} is missing or incomplete)`;
  return '';
}

/** The fix for a runtime the engine could not run. */
const RUNTIME_FIX = `remove the runtime volume so the next sandbox makes it again (\`docker volume rm ${runtimeVolumeName()}\`), and check that the image's platform is the engine's (\`docker image inspect --format '{{.Os}}/{{.Architecture}}' IMAGE\`)`;

const SESSION_RESTARTED =
  "the sandbox's shell session died and was restarted; cwd and exported variables were restored, background processes may be gone";

/** The session died during the call; a new one is up. */
class SessionRestarted extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes output: text (U+FFFD for bad bytes) plus base64 of the raw bytes when they are not UTF-8. */
function decodeOutput(raw: Buffer, truncated: boolean): { text: string; b64?: string } {
  // Every call decodes two streams, most often empty or plain UTF-8: checked without the
  // fatal decoder's exception machinery (a fatal TextDecoder costs ~0.1 ms a call even empty).
  if (raw.length === 0) return { text: '' };
  // (A leading BOM goes to the decoder, which drops it, as it always did.)
  if (isUtf8(raw) && !(raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf))
    return { text: raw.toString('utf8') };
  try {
    return { text: utf8.decode(raw) };
  } catch {
    // A cap can cut a multi-byte character in two: that alone does not make the output binary.
    if (truncated) {
      for (let cut = 1; cut <= 3 && cut < raw.length; cut++) {
        try {
          utf8.decode(raw.subarray(0, raw.length - cut));
          return { text: raw.toString('utf8') };
        } catch {
          continue;
        }
      }
    }
    return { text: raw.toString('utf8'), b64: raw.toString('base64') };
  }
}

function toolCode(code: string): ToolError['code'] {
  const parsed = ToolErrorCode.safeParse(code);
  return parsed.success ? parsed.data : 'tool_failed';
}

/** Hooks the provider gives each sandbox. */
export interface DockerSandboxHooks {
  /** The engine's `oom` events per container (the fallback when the helper cannot read the cgroup counter). */
  readonly ooms: Pick<OomEvents, 'count' | 'waitAbove'>;
  /** Called once when the sandbox is destroyed. */
  onDestroy(id: string): void;
  /** Called when the sandbox is kept past this process ({@link DockerSandbox.keep}). */
  onKeep?(id: string): void;
  /**
   * The image's own files at the working directory (a tmpfs there hides them): put in at
   * start and at every reset, so they are the clean state and part of snapshot 0.
   */
  readonly seed?: WorkspaceSeed | null;
  /** How long a tool call may busy-poll the helper's socket for its reply (reply-spin.ts); 0 or absent: never. */
  readonly replySpinMs?: number;
}

/**
 * A sandbox backed by a Docker container and one long-lived helper process inside it
 * (resources/sandbox/helper.py), started by a single `docker exec`. Every operation is a
 * request to that helper (~1 ms), never a new exec (~100 ms).
 */
export class DockerSandbox implements Sandbox {
  readonly backend = 'docker';
  private helper!: HelperClient;
  /** The helper's channel as it was started (see helper-channel.ts). */
  private connection: HelperConnection | undefined;
  private recovering: Promise<void> | undefined;
  private session: SessionState | undefined;
  private previous: readonly ManifestEntry[] = [];
  /** The helper's tree whose entries `previous` holds (a capture's delta against it is the change). */
  private previousTree: HelperTree | undefined;
  /** The tree the helper last told us about (see snapshot-wire.ts). */
  private base: HelperTree | undefined;
  /** Whether the helper refused to fill this sandbox's workspace as empty (see restoreOnce). */
  private fillRefused = false;
  /** Blobs sent ahead of the next restore (see stageAhead): hash -> size. A new helper has none. */
  private ahead = new Map<string, number>();
  private lost: SandboxFailure | undefined;
  /** How the helper's last snapshot scan went: 'pruned' (only what inotify named) or 'full'. */
  lastScanWalk: 'pruned' | 'full' | undefined;
  /**
   * The in-sandbox duration (ms, the helper's clock) of the last `exec`, from the command's
   * start to its end: with the host's time of the same call, what the call added (bench).
   */
  lastCommandMs: number | undefined;
  /** Why this sandbox's limits do not hold, when the user allowed that (rootless on cgroup v1); else undefined. */
  unenforcedLimits: string | undefined;
  /** The OCI runtime the container runs on (the config's, else the engine's default); null when the engine does not say. */
  runtime: string | null = null;
  private destroying: Promise<void> | undefined;
  private readonly log;

  /** Which channel the helper speaks over now, and why not the socket when it is the exec. */
  channel: HelperChannel;

  constructor(
    private readonly engine: DockerEngine,
    readonly id: string,
    readonly config: SandboxConfig,
    private readonly hooks: DockerSandboxHooks,
    /** The host's socket for this sandbox's helper, or why there is none (helper-socket.ts). */
    private readonly offer: ChannelOffer = { reason: 'no socket was offered' },
  ) {
    this.log = log.child(id.slice(0, 12));
    this.channel = { kind: 'exec', reason: 'socket' in offer ? 'not started yet' : offer.reason };
  }

  /**
   * Starts the helper (one exec) and waits for its hello, over the host's socket when this
   * sandbox has one and the helper can reach it, else over the exec (helper-channel.ts).
   */
  async start(): Promise<void> {
    const source = loadHelperSource();
    // A fresh token per start: a restarted helper's predecessor can no longer connect.
    const wait = 'socket' in this.offer ? this.offer.socket.expect() : undefined;
    const boot = bootConfig(wait, workdirOf(this.config));
    let streams: ExecStreams;
    try {
      // As root: the helper must be another user than every command (see helper.py).
      const { cmd, options } = bootstrapExec(source.length, boot.length);
      streams = await this.engine.exec(this.id, cmd, options);
    } catch (e) {
      wait?.cancel();
      throw (await this.engine.isRunning(this.id)) ? e : await this.stoppedAtStart();
    }
    let stderr = '';
    streams.stderr.on('data', (c: Buffer) => {
      const text = c.toString('utf8');
      stderr = (stderr + text).slice(-4000);
      this.log.debug(text.trimEnd());
    });
    streams.stdin.write(source);
    streams.stdin.write(boot);
    // A new helper knows no tree: the next scan or restore is whole; it staged nothing.
    this.base = undefined;
    this.ahead = new Map();
    let connection: HelperConnection;
    try {
      connection = await connectHelper(
        streams,
        wait,
        'socket' in this.offer ? '' : this.offer.reason,
        HELLO_TIMEOUT_MS,
        this.hooks.replySpinMs,
      );
    } catch (e) {
      streams.close();
      if (!(await this.engine.isRunning(this.id))) throw await this.stoppedAtStart();
      const why = e instanceof Error ? e.message : String(e);
      throw new SandboxFailure(
        'sandbox_failed',
        `the sandbox helper did not start in ${this.id.slice(0, 12)} (${why})${stderr ? `; helper stderr: ${stderr.trim().slice(-500)}` : ''}${execProblem(why + stderr)}`,
        execProblem(why + stderr) ? RUNTIME_FIX : undefined,
      );
    }
    const helper = connection.client;
    helper.onClose = (reason) => {
      if (!this.lost)
        this.log.warn(
          `helper gone: ${reason}${stderr ? `; its last stderr: ${stderr.trim().slice(-500)}` : ''}`,
        );
    };
    this.helper = helper;
    this.everStarted = true;
    this.connection = connection;
    this.channel = connection.channel;
    if (connection.channel.kind === 'exec' && wait) this.log.info(describeChannel(connection.channel));
    const hello = connection.hello;
    this.isolated = hello.isolated === true;
    this.helloSealed = hello.sealed === true;
    if (!this.isolated)
      this.log.warn(
        'the helper runs as the same user as the commands (not isolated): code in the sandbox can reach its channel',
      );
    else if (hello.sealed !== true)
      this.log.warn(
        "the helper's idle shells are not sealed (fs.suid_dumpable = 1 on this host): a command can ptrace the shell of a later call",
      );
  }

  /** Whether the helper runs as another user than the commands (its channel out of their reach). */
  isolated = false;

  /** Whether a sealed shell is out of the agent's reach here (see {@link Sandbox.sealed}). */
  get sealed(): boolean {
    return this.helloSealed && !isGvisor(this.runtime);
  }

  /** What the helper's hello said of the seal (fs.suid_dumpable); gVisor voids it whatever it says. */
  private helloSealed = false;

  /** Whether a helper of this sandbox ever said hello (else the container stopping is its image's doing). */
  private everStarted = false;

  /**
   * The container stopped while a helper started: before the first hello, its main command
   * ended by itself — most often an image ENTRYPOINT that does not run its arguments.
   */
  private async stoppedAtStart(): Promise<SandboxFailure> {
    if (this.everStarted) return this.stopped();
    const code = await this.engine.exitCodeOf(this.id).catch(() => null);
    return new SandboxFailure(
      'sandbox_failed',
      `sandbox container ${this.id.slice(0, 12)} of ${this.config.image} stopped before its helper started (its main command exited${code === null ? '' : ` with ${code}`}): the image's ENTRYPOINT, when it has one, runs first with stepbox's main command as its arguments and must end by running them`,
      `use an image whose ENTRYPOINT ends with \`exec "$@"\`, or none (\`docker image inspect --format '{{.Config.Entrypoint}}' ${this.config.image}\`)`,
    );
  }

  /**
   * The failure of a container the engine's OOM killer stopped, or null when it was not that:
   * on gVisor a command past the memory limit ends the whole sandbox (it has no OOM killer of
   * its own, docker/gvisor.ts).
   */
  private async outOfMemory(): Promise<SandboxFailure | null> {
    if (!(await this.engine.stoppedByOom(this.id))) return null;
    const gvisor =
      this.runtime === GVISOR_RUNTIME
        ? ' (on gVisor the whole sandbox ends: it has no OOM killer of its own)'
        : '';
    return new SandboxFailure(
      'sandbox_lost',
      `sandbox container ${this.id.slice(0, 12)} ran out of memory and the engine stopped it${gvisor}`,
    );
  }

  /** Why the stopped container stopped: out of memory, else its main process killed. */
  private async stopped(): Promise<SandboxFailure> {
    return (
      (await this.outOfMemory()) ??
      new SandboxFailure(
        'sandbox_lost',
        `sandbox container ${this.id.slice(0, 12)} stopped (its main process was killed, e.g. by \`kill -9 -1\`)`,
      )
    );
  }

  // ------------------------------------------------------------------ helper calls

  /** The helper when it can take a request now (no await on a tool call's path); else undefined. */
  private ready(): HelperClient | undefined {
    return this.lost || this.recovering || this.helper.closed ? undefined : this.helper;
  }

  private async live(): Promise<HelperClient> {
    if (this.lost) throw this.lost;
    if (this.recovering) await this.recovering;
    if (this.helper.closed) {
      await this.recover();
      throw new SessionRestarted(SESSION_RESTARTED);
    }
    return this.helper;
  }

  /**
   * On gVisor an OOM event means the host stopped the Sentry, the whole sandbox (it has no OOM
   * killer of its own, docker/gvisor.ts), and the helper's channel may not say so until the
   * call's hung timer: once the container has stopped, its channel is closed, so the call
   * ends now as the sandbox lost (out of memory) rather than after its timeout.
   */
  private endOnOom(seen: number, withinMs: number): void {
    void this.hooks.ooms.waitAbove(this.id, seen, withinMs).then(async (oom) => {
      if (!oom) return;
      for (let i = 0; i < 50 && (await this.engine.isRunning(this.id).catch(() => false)); i++)
        await new Promise((resolve) => setTimeout(resolve, 200));
      this.connection?.close();
    });
  }

  /** True once the engine says the container is not running, false if it still runs after `ms`. */
  private async stopsWithin(ms: number): Promise<boolean> {
    const until = performance.now() + ms;
    for (;;) {
      if (!(await this.engine.isRunning(this.id).catch(() => false))) return true;
      if (performance.now() >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Restarts a dead helper, or marks the sandbox lost when its container is gone. */
  private recover(): Promise<void> {
    this.recovering ??= (async () => {
      try {
        if (this.lost) throw this.lost;
        if (!(await this.engine.isRunning(this.id))) {
          this.lost =
            (await this.outOfMemory()) ??
            new SandboxFailure(
              'sandbox_lost',
              `sandbox container ${this.id.slice(0, 12)} is gone or stopped`,
            );
          throw this.lost;
        }
        this.connection?.close();
        this.log.warn('restarting the helper');
        try {
          await this.start();
        } catch (e) {
          // The container stopped between the check above and the new helper's exec (on gVisor a
          // command past the memory limit ends the whole sandbox, and the engine says so a moment
          // after the channel breaks): why it stopped, not the exec's refusal, which read as a
          // missing runtime volume (the gVisor selftest's memory check, 2 runs in 4 on cgroup v1).
          // The engine's state trails the runtime's ("cannot execute … in state stopped" while
          // inspect still says running): asked again for up to 3 s, as endOnOom waits for it.
          if (await this.stopsWithin(3_000)) {
            this.lost = await this.stopped();
            throw this.lost;
          }
          if (e instanceof SandboxFailure && e.code === 'sandbox_lost') this.lost = e;
          throw e;
        }
        // The main command died (kill -9 -1) but init has not stopped the container yet: the
        // new helper would die with it in a moment.
        if ((await this.helper.hello).main === null) {
          this.helper.close('the container is stopping');
          this.connection?.close();
          this.lost = await this.stopped();
          throw this.lost;
        }
        if (this.session) await this.helper.request('set_session', { ...this.session });
      } finally {
        this.recovering = undefined;
      }
    })();
    return this.recovering;
  }

  /** One request; a helper that dies during it is restarted and the call fails with SessionRestarted. */
  private async call<Op extends HelperOp>(
    op: Op,
    args: HelperRequest<Op>,
    payload?: Uint8Array,
    maxPayload = 0,
  ): Promise<HelperResponse<Op>> {
    const helper = await this.live();
    try {
      return await helper.request(op, args, payload, maxPayload);
    } catch (e) {
      if (e instanceof HelperClosed) {
        await this.recover();
        throw new SessionRestarted(SESSION_RESTARTED);
      }
      throw e;
    }
  }

  /** Like call(), but retried once on a restarted session (for idempotent operations). */
  private async callRetrying<Op extends HelperOp>(
    op: Op,
    args: HelperRequest<Op>,
    payload?: Uint8Array,
    maxPayload = 0,
  ): Promise<HelperResponse<Op>> {
    try {
      return await this.call(op, args, payload, maxPayload);
    } catch (e) {
      if (e instanceof SessionRestarted) return this.call(op, args, payload, maxPayload);
      throw e;
    }
  }

  private fileError(e: unknown): Result<never, ToolError> {
    if (e instanceof HelperError) return err({ code: toolCode(e.code), message: e.message });
    if (e instanceof SessionRestarted) return err({ code: 'session_restarted', message: e.message });
    throw e;
  }

  // ------------------------------------------------------------------ tools

  /** Runs a command line in the persistent session (or a fresh one); see helper.py for the semantics. */
  async exec(request: ExecRequest): Promise<ToolResult> {
    const started = performance.now();
    const oomBefore = this.hooks.ooms.count(this.id);
    if (this.runtime === GVISOR_RUNTIME) this.endOnOom(oomBefore, request.timeoutMs + HUNG_GRACE_MS);
    let response: HelperResponse<'exec'>;
    try {
      const helper = this.ready() ?? (await this.live());
      // A helper that does not answer in time is closed by its client, which fails the call
      // with HelperClosed; the restart below closes its channel.
      response = await helper.request(
        'exec',
        {
          command: request.command,
          timeout_ms: Math.max(1, Math.round(request.timeoutMs)),
          fresh: request.fresh === true,
          cap: this.config.limits.outputBytes,
        },
        undefined,
        2 * this.config.limits.outputBytes,
        request.timeoutMs + HUNG_GRACE_MS,
      );
    } catch (e) {
      const ms = performance.now() - started;
      if (e instanceof SessionRestarted) return toolFailure('session_restarted', e.message, ms);
      if (e instanceof HelperClosed) {
        await this.recover();
        return toolFailure('session_restarted', SESSION_RESTARTED, ms);
      }
      if (e instanceof HelperError) return toolFailure(toolCode(e.code), e.message, ms);
      throw e;
    }
    const h = response.header;
    // The cgroup counter is authoritative when the helper can read it (see OomEvents). Without
    // it, Docker's event decides, only for a command that ended by SIGKILL (itself, or the
    // child whose status the shell passed on as 137), so a late event does not blame an
    // ordinary next call; it waits a moment because the event can trail the answer.
    const oomByEvent =
      !h.error &&
      (h.signal === 9 || h.exit_code === 137) &&
      h.oom_counter === false &&
      (await this.hooks.ooms.waitAbove(this.id, oomBefore, OOM_EVENT_WAIT_MS));
    return this.execResult(response, started, oomByEvent);
  }

  /** The tool result of an exec reply (synchronous: no more turns on a call's path). */
  private execResult(response: HelperResponse<'exec'>, started: number, oomByEvent: boolean): ToolResult {
    const h = response.header;
    this.lastCommandMs = h.duration_ms;
    if (h.session) this.session = h.session;
    const outRaw = response.payload.subarray(0, h.stdout_len);
    const errRaw = response.payload.subarray(h.stdout_len);
    const truncated = { stdout: h.stdout_total > outRaw.length, stderr: h.stderr_total > errRaw.length };
    const out = decodeOutput(outRaw, truncated.stdout);
    const errOut = decodeOutput(errRaw, truncated.stderr);
    const error = h.error
      ? { code: toolCode(h.error.code), message: h.error.message }
      : oomByEvent
        ? { code: 'oom' as const, message: 'the command ran out of memory (Docker reported an OOM kill)' }
        : undefined;
    const result: ToolResult = {
      ok: error === undefined,
      ...(h.exit_code !== null ? { exit_code: h.exit_code } : {}),
      stdout: out.text,
      stderr: errOut.text,
      truncated,
      ...(out.b64 !== undefined ? { stdout_b64: out.b64 } : {}),
      ...(errOut.b64 !== undefined ? { stderr_b64: errOut.b64 } : {}),
      ...(error ? { error } : {}),
      duration_ms: performance.now() - started,
      bytes: h.stdout_total + h.stderr_total,
    };
    return result;
  }

  /** Reads a file (relative paths against /workspace). */
  async readFile(path: string): Promise<Result<Uint8Array, ToolError>> {
    try {
      const r = await this.call('read', { path }, undefined, MAX_READ_BYTES);
      return ok(new Uint8Array(r.payload.buffer, r.payload.byteOffset, r.payload.length));
    } catch (e) {
      return this.fileError(e);
    }
  }

  /** Writes a file, creating parent directories. */
  async writeFile(
    path: string,
    content: Uint8Array,
    mode?: number,
  ): Promise<Result<{ bytes: number }, ToolError>> {
    try {
      const r = await this.call('write', mode === undefined ? { path } : { path, mode }, content);
      return ok({ bytes: r.header.bytes });
    } catch (e) {
      return this.fileError(e);
    }
  }

  /** Lists a directory, entries sorted by name. */
  async listDir(path: string): Promise<Result<DirEntry[], ToolError>> {
    try {
      const r = await this.call('list', { path });
      return ok(r.header.entries);
    } catch (e) {
      return this.fileError(e);
    }
  }

  // ------------------------------------------------------------------ session

  /** The session's cwd and exported environment. */
  async sessionState(): Promise<SessionState> {
    const r = await this.callRetrying('get_session', {});
    this.session = { cwd: r.header.cwd, env: r.header.env };
    return this.session;
  }

  /** Replaces the session's cwd and exported environment (rollback). */
  async setSessionState(state: SessionState): Promise<void> {
    this.session = { cwd: state.cwd, env: { ...state.env } };
    await this.callRetrying('set_session', { ...this.session });
  }

  // ------------------------------------------------------------------ snapshots

  /**
   * Captures /workspace into `store`: the helper rehashes what changed, the host fetches only
   * missing blobs, in bounded chunks. A helper restart or a file changing during the
   * transfer starts the capture over once (nothing partial is stored under a hash).
   */
  async snapshot(store: SnapshotStore, options: SnapshotOptions = {}): Promise<SnapshotInfo> {
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.snapshotOnce(store, options, started);
      } catch (e) {
        if (attempt === 0 && (e instanceof SessionRestarted || e instanceof BlobChanged)) {
          this.log.warn(`snapshot: ${e.message}; capturing again`);
          continue;
        }
        throw this.failure(e, 'snapshot_failed');
      }
    }
  }

  private async snapshotOnce(
    store: SnapshotStore,
    options: SnapshotOptions,
    started: number,
  ): Promise<SnapshotInfo> {
    const fileCap = options.fileCapBytes ?? SNAPSHOT_FILE_CAP_BYTES;
    const base = this.base;
    const c = await captureWorkspace(this.call.bind(this), store, base, fileCap, this.log, options.onTaken);
    this.base = c.tree;
    this.lastScanWalk = c.walk;
    const id = await store.putManifest({ treeHash: c.treeHash, entries: c.entries });
    // A delta against the tree of the last snapshot or restore is what changed since it.
    const changed =
      c.changes && base && base === this.previousTree
        ? [...c.changes]
        : diffEntries(this.previous, c.entries);
    this.previous = c.entries;
    this.previousTree = c.tree;
    return {
      manifest: id,
      treeHash: c.treeHash,
      changed,
      bytes: c.bytes,
      durationMs: performance.now() - started,
      ...(c.skipped.length ? { skipped: c.skipped } : {}),
    };
  }

  /**
   * Restores /workspace to `manifest`: only needed blobs cross, staged in bounded chunks;
   * the tree hash is recomputed inside. A manifest whose paths could leave /workspace is
   * refused before anything changes.
   */
  async restore(
    store: SnapshotStore,
    manifest: SnapshotManifest,
    verify: VerifyMode = 'touched',
  ): Promise<RestoreInfo> {
    const problem = manifestProblem(manifest);
    if (problem)
      throw new SandboxFailure(
        'restore_failed',
        `refusing to restore this snapshot: ${problem}; the snapshot is damaged or was not made by stepbox (re-import it from a trusted bundle)`,
      );
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.restoreOnce(store, manifest, verify);
      } catch (e) {
        // The helper restarted (its staged blobs and scan are gone): once more from the start.
        if (attempt === 0 && e instanceof SessionRestarted) continue;
        throw this.failure(e, 'restore_failed');
      }
    }
  }

  /**
   * Stages whole blobs for the next restore now (a folder import sends each chunk as it is
   * read): the helper writes them (and hashes them, unless `hashedHere`, see
   * Sandbox.stageAhead) as for any restore, which then names them as staged instead of
   * sending them again.
   */
  async stageAhead(
    blobs: readonly (readonly [string, number])[],
    payload: Uint8Array,
    hashedHere = false,
  ): Promise<void> {
    if (!blobs.length) return;
    const ahead = this.ahead;
    const parts = blobs.map(([hash, size]): [string, number, number] => [hash, 0, size]);
    await this.call('stage', hashedHere ? { parts, named: true } : { parts }, payload);
    // Not when the helper restarted meanwhile (it has a new map, and none of these).
    if (ahead === this.ahead) for (const [hash, size] of blobs) ahead.set(hash, size);
  }

  private async restoreOnce(
    store: SnapshotStore,
    manifest: SnapshotManifest,
    verify: VerifyMode,
  ): Promise<RestoreInfo> {
    const started = performance.now();
    // Every restore ends with the helper's stage emptied: what was sent ahead is used now or never.
    const ahead = this.ahead;
    this.ahead = new Map();
    const r = await restoreWorkspace(
      this.call.bind(this),
      store,
      this.base,
      manifest,
      verify,
      this.log,
      ahead,
      !this.fillRefused,
    );
    // Its workspace is not empty when the helper knows no tree (the image's own files, back
    // at every reset): restored the usual way from now on, not offered a fill first.
    if (r.fill === 'refused') this.fillRefused = true;
    this.previous = r.entries;
    this.previousTree = r.tree;
    this.base = r.tree;
    return {
      treeHash: r.treeHash,
      written: r.written,
      removed: r.removed,
      durationMs: performance.now() - started,
    };
  }

  /**
   * Runs the verifier as the agent's user, after every process of that user is killed, over
   * a channel no command of the agent's, nor anything it left running, can touch: a plain
   * verifier through the isolated helper itself (its `verify` op: no exec to start, the
   * helper's record of the exit code); one with files or a reward folder, or any where the
   * helper is not isolated, in its own `docker exec` (resources/sandbox/verifier.py, the exit
   * code the engine's). Both run it the one way (verifier_run.py).
   */
  async runVerifier(request: VerifierRequest): Promise<VerifierRun> {
    if (this.lost) throw this.lost;
    this.verifiedByRunner = request.files !== undefined || request.rewardDir !== undefined;
    if (this.helperVerifies(this.verifiedByRunner)) {
      // A runner started ahead for a verifier with files is let go unused.
      this.dropVerifierRunner();
      this.verified = true;
      try {
        return await runVerifierInHelper(
          this.ready() ?? (await this.live()),
          request,
          this.config.limits.outputBytes,
          workdirOf(this.config),
        );
      } catch (e) {
        if (e instanceof SessionRestarted) throw new SandboxFailure('sandbox_failed', e.message);
        if (e instanceof HelperClosed) {
          await this.recover();
          throw new SandboxFailure(
            'sandbox_failed',
            `the helper ended during the verification: ${e.message}`,
          );
        }
        if (e instanceof HelperError)
          throw new SandboxFailure('sandbox_failed', `the helper could not run the verifier: ${e.message}`);
        throw e;
      }
    }
    const ahead = await this.takeVerifierRunner();
    this.verified = true;
    // Recycled (see reset): the next episode's runner starts beside this verification, so it
    // is up by that episode's end even when its steps take less than an exec's start (a
    // runner started at the reset was still starting at the verification under load). Root,
    // it outlives this verification's kill of every process of the agent's.
    if (this.recycled) this.prepareVerifier();
    return runVerifierExec(
      this.engine,
      this.id,
      request,
      this.config.limits.outputBytes,
      ahead,
      workdirOf(this.config),
    );
  }

  /**
   * Whether the helper runs this verification itself (helper_verify.py): an isolated helper
   * (root, its channel out of the agent's reach) and a plain verifier. Files or a reward
   * folder only the verifier may see (`ownDirs`) take the runner's own exec; so does every
   * verifier of a helper that runs as the agent.
   */
  private helperVerifies(ownDirs: boolean): boolean {
    return this.isolated && !ownDirs;
  }

  /** Whether the last verification had files or a reward folder (it took the runner's exec). */
  private verifiedByRunner = false;

  /** Whether a verification ran since the last {@link reset}: the sandbox's next episode likely has one too. */
  private verified = false;
  /** Whether this sandbox was reset (recycled) at least once: it likely will be again. */
  private recycled = false;

  /** A runner started ahead (see {@link prepareVerifier}), or a new one, held until the next verification. */
  private verifierRunner: Promise<VerifierRunner | undefined> | undefined;

  /**
   * Starts the verifier's exec now, to be used by the next {@link runVerifier}: its exec and
   * interpreter start are then off the episode's end. The runner waits, root and out of the
   * agent's reach, and kills and runs nothing until it is given its command; the kill of
   * every process of the agent's, the fresh shell and the engine's exit code are as before.
   */
  prepareVerifier(needs?: { readonly ownDirs: boolean }): void {
    if (this.lost || this.verifierRunner) return;
    // The helper runs a plain verifier itself: nothing to start (see helperVerifies). Asked
    // without saying (a recycled sandbox's next task is not known yet): as the last one ran.
    if (this.helperVerifies(needs?.ownDirs ?? this.verifiedByRunner)) return;
    this.verifierRunner = startVerifierRunner(this.engine, this.id, this.config.limits.outputBytes).catch(
      (e: Error) => {
        this.log.debug(`verifier runner not started ahead: ${e.message}`);
        return undefined;
      },
    );
  }

  private async takeVerifierRunner(): Promise<VerifierRunner | undefined> {
    const pending = this.verifierRunner;
    this.verifierRunner = undefined;
    return pending;
  }

  /**
   * Lets a runner started ahead go and waits until it has exited (a task without a verifier
   * in a sandbox recycled from one with: it sees no process a fresh sandbox would not have).
   */
  async dropVerifier(): Promise<void> {
    const runner = await this.takeVerifierRunner();
    if (!runner) return;
    // Its stdin's end: it exits having killed and run nothing; its stdout ends with it.
    runner.streams.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), DROP_WAIT_MS);
    });
    const ended = await Promise.race([runner.out.then(() => 'ended' as const), late]);
    clearTimeout(timer);
    if (ended === 'late') {
      this.log.warn(
        `a verifier runner did not exit within ${DROP_WAIT_MS} ms of being let go; closing its exec`,
      );
      runner.streams.close();
    }
  }

  /** Lets a runner started ahead go unused (its stdin closed, it exits). */
  private dropVerifierRunner(): void {
    const pending = this.verifierRunner;
    this.verifierRunner = undefined;
    void pending?.then((r) => r?.streams.close());
  }

  private failure(e: unknown, code: 'snapshot_failed' | 'restore_failed'): Error {
    // Store damage is reported as such (and its fix), not as a sandbox failure.
    if (e instanceof SandboxFailure || e instanceof SnapshotCorruptError) return e;
    if (e instanceof HelperError)
      return new SandboxFailure(e.code === 'verify_failed' ? 'verify_failed' : code, e.message);
    if (e instanceof SessionRestarted)
      return new SandboxFailure(
        code,
        `the sandbox helper restarted during the ${code === 'snapshot_failed' ? 'snapshot' : 'restore'}`,
      );
    return new SandboxFailure(code, e instanceof Error ? e.message : String(e));
  }

  // ------------------------------------------------------------------ lifecycle

  /** Starts an agent inside this container with its bridge to the host (inside-agent-bridge.ts). */
  async startAgent(request: InsideAgentRequest): Promise<InsideAgentRun> {
    if (this.lost) throw this.lost;
    return startInsideAgent(this.engine, this.id, request, workdirOf(this.config));
  }

  /** The agent's processes alive but `exclude`'s tree, and the file-changing ops so far (helper.py op_writers). */
  async writers(exclude?: number): Promise<Writers> {
    if (this.lost) throw this.lost;
    // Not retried: a restarted helper counts its ops from 0, which the caller reads as a change.
    const { header } = await this.call('writers', exclude === undefined ? {} : { exclude });
    return header;
  }

  /** Kills every process but init, the main command and the helper; empties /tmp, $HOME, /dev/shm, queues and IPC. */
  async killStrays(): Promise<void> {
    await this.callRetrying('kill_strays', {});
  }

  /** The image's own files at the working directory (the provider's seed), or null. */
  workspaceSeed(): WorkspaceSeed | null {
    return this.hooks.seed ?? null;
  }

  /**
   * Puts the image's own files at the working directory in place (the hooks' seed), through
   * the one restore every snapshot takes. The next snapshot lists them all as added: they
   * are part of snapshot 0, not a change before it.
   */
  async plantSeed(): Promise<void> {
    const seed = this.hooks.seed;
    if (emptySeed(seed)) return;
    await this.restore(seed!.store, seed!.manifest, 'touched');
    this.previous = [];
    this.previousTree = undefined;
  }

  /** Back to the clean state: no strays, the working directory as the image has it, empty /tmp, fresh session. */
  async reset(): Promise<void> {
    await this.callRetrying('reset', {});
    this.ahead = new Map();
    this.session = undefined;
    this.previous = [];
    this.base = undefined;
    await this.plantSeed();
    // Recycled (a batch's next episode, most often of the same task): the next verifier's
    // runner starts now, not at that episode's start — an episode of a few steps ended before
    // a runner started with it was ready (its exec and python's start were ~40% of a pooled
    // bench episode under load). It waits as root, out of the agent's reach, doing nothing
    // until its arguments come; an episode without a verifier lets it go before its setup.
    if (this.verified) this.prepareVerifier();
    this.verified = false;
    this.recycled = true;
  }

  /**
   * Keeps the container past this process (`stepbox run --keep`): renames it
   * `stepbox-kept-ID` so no orphan sweep removes it, and its provider no longer destroys
   * it on close. Removing it is then the user's job (`docker rm -f ID`).
   */
  async keep(): Promise<void> {
    // Its open exec would keep this process alive past its work.
    this.dropVerifierRunner();
    await this.engine.rename(this.id, keptName(this.id));
    this.hooks.onKeep?.(this.id);
  }

  /** Removes the container; an already-gone container counts as destroyed. */
  destroy(): Promise<void> {
    this.lost = new SandboxFailure('sandbox_lost', `sandbox ${this.id.slice(0, 12)} was destroyed`);
    this.destroying ??= (async () => {
      this.helper?.close('the sandbox is being destroyed');
      this.connection?.close();
      this.dropVerifierRunner();
      try {
        await this.engine.remove(this.id);
      } catch (e) {
        // Let a later destroy() try again.
        this.destroying = undefined;
        throw e;
      }
      if ('socket' in this.offer)
        await this.offer.socket
          .close()
          .catch((e: Error) => this.log.warn(`cannot remove the helper's socket folder: ${e.message}`));
      this.hooks.onDestroy(this.id);
    })();
    return this.destroying;
  }
}
