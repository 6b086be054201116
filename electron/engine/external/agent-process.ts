import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { logger } from '../log.js';
import type { AgentOutput, OutputListener } from '../agents/agent-output.js';

export type { AgentOutput, OutputListener } from '../agents/agent-output.js';

const log = logger('exec-agent');

/** How much of the agent's stderr an `agent_exit` error keeps. */
export const STDERR_TAIL_BYTES = 2048;
/**
 * How much of each stream is kept per step, in the trace and live in the window; the
 * rest is counted, not kept or sent (an agent may write gigabytes).
 */
export const STEP_OUTPUT_BYTES = 64 * 1024;
/** Grace between SIGTERM and SIGKILL of the agent's process group. */
const KILL_GRACE_MS = 2_000;

/**
 * The host variables an agent program needs to start at all (find its interpreter,
 * decode text, write temp files). Everything else — the Docker socket and host,
 * $STEPBOX_HOME, API keys, cloud credentials — stays out.
 */
export const PASSED_HOST_VARIABLES = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'TERM',
  'USER',
];

/** The environment of the contract plus the host basics above, nothing else. */
export function agentEnvironment(
  contract: Record<string, string>,
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_HOST_VARIABLES) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...contract };
}

/** How the process ended. */
export interface AgentExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** The last {@link STDERR_TAIL_BYTES} of stderr. */
  readonly stderrTail: string;
}

/** One stream's output of the current step: kept bytes up to the cap, everything counted. */
export class StepStream {
  private decoder = new StringDecoder('utf8');
  private kept: string[] = [];
  private keptBytes = 0;
  private total = 0;
  private capped = false;

  /** Takes a chunk; returns the text kept from it and whether it is the first to go past the cap. */
  add(chunk: Buffer): { text: string; hitCap: boolean } {
    this.total += chunk.length;
    const room = STEP_OUTPUT_BYTES - this.keptBytes;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.keptBytes += part.length;
    // The decoder holds a character split across chunks (or cut by the cap) back.
    const text = part.length > 0 ? this.decoder.write(part) : '';
    if (text) this.kept.push(text);
    const hitCap = chunk.length > room && !this.capped;
    if (hitCap) this.capped = true;
    return { text, hitCap };
  }

  take(): { text: string; bytes: number; truncated: boolean } {
    const out = { text: this.kept.join(''), bytes: this.total, truncated: this.total > this.keptBytes };
    this.decoder = new StringDecoder('utf8');
    this.kept = [];
    this.keptBytes = 0;
    this.total = 0;
    return out;
  }
}

/**
 * What an agent's process wrote, as both kinds of process keep it (on the host,
 * {@link AgentProcess}; inside the sandbox, `InsideAgentProcess`): each stream per step,
 * bounded, streamed to a listener as written, and the stderr tail its exit reports.
 */
export class ProcessOutput {
  private tail = Buffer.alloc(0);
  private readonly stdout = new StepStream();
  private readonly stderr = new StepStream();

  constructor(private readonly listener?: OutputListener) {}

  /** Takes a chunk the process wrote: kept for the step, passed on to the listener. */
  add(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    if (stream === 'stderr') this.noteStderr(chunk);
    const { text, hitCap } = this[stream].add(chunk);
    if (text || hitCap) this.listener?.(stream, text, hitCap);
  }

  /** Adds to the stderr tail only (why the process could not start). */
  noteStderr(chunk: Buffer): void {
    this.tail = Buffer.concat([this.tail, chunk]).subarray(-STDERR_TAIL_BYTES);
  }

  /** The last {@link STDERR_TAIL_BYTES} of stderr. */
  stderrTail(): string {
    return this.tail.toString('utf8');
  }

  /** What the process wrote since the last call (per step, each stream bounded). */
  take(): AgentOutput {
    const out = this.stdout.take();
    const err = this.stderr.take();
    return {
      stdout: out.text,
      stderr: err.text,
      bytes: { stdout: out.bytes, stderr: err.bytes },
      truncated: { stdout: out.truncated, stderr: err.truncated },
    };
  }
}

/** A process's output since the last take, or null when it wrote nothing (the harness records it per step). */
export function writtenSince(proc: { takeOutput(): AgentOutput } | null): AgentOutput | null {
  const out = proc?.takeOutput();
  return out && (out.bytes.stdout > 0 || out.bytes.stderr > 0) ? out : null;
}

/**
 * The user's agent program: `sh -c CMD` in its own process group (so stopping it stops
 * everything it started), output kept per step and streamed to listeners.
 */
export class AgentProcess {
  private readonly child: ChildProcess;
  private readonly output: ProcessOutput;
  readonly exited: Promise<AgentExit>;
  private done: AgentExit | null = null;

  constructor(
    readonly command: string,
    cwd: string,
    env: Record<string, string>,
    onOutput?: OutputListener,
  ) {
    this.output = new ProcessOutput(onOutput);
    this.child = spawn('sh', ['-c', command], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (b: Buffer) => this.output.add('stdout', b));
    this.child.stderr?.on('data', (b: Buffer) => this.output.add('stderr', b));
    this.exited = new Promise((resolve) => {
      this.child.on('error', (e) => this.output.noteStderr(Buffer.from(`\n${e.message}`)));
      this.child.on('close', (code, signal) => {
        this.done = { code, signal, stderrTail: this.output.stderrTail() };
        resolve(this.done);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The exit, once the process has ended. */
  exit(): AgentExit | null {
    return this.done;
  }

  /** What the process wrote since the last call (per step, each stream bounded). */
  takeOutput(): AgentOutput {
    return this.output.take();
  }

  /** Stops the process group: SIGTERM, then SIGKILL after a grace. */
  async stop(): Promise<void> {
    if (this.done) {
      // The shell is gone; what it started in the background may not be.
      this.signal('SIGKILL');
      return;
    }
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), KILL_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
    // Children that ignored SIGTERM and outlived the shell still belong to the group.
    this.signal('SIGKILL');
  }

  private signal(sig: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, sig);
    } catch (e) {
      if (!(e instanceof Error && 'code' in e && e.code === 'ESRCH'))
        log.warn(`cannot signal agent ${pid}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
