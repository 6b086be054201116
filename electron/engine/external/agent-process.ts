import { spawn, type ChildProcess } from 'node:child_process';
import { logger } from '../log.js';

const log = logger('exec-agent');

/** How much of the agent's stderr an `agent_exit` error keeps. */
export const STDERR_TAIL_BYTES = 2048;
/** How much output is kept per step (the rest is counted, not kept). */
const STEP_OUTPUT_BYTES = 64 * 1024;
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

/** Output the process wrote since the last {@link AgentProcess.takeOutput}. */
export interface AgentOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The user's agent program: `sh -c CMD` in its own process group (so stopping it stops
 * everything it started), output kept per step and streamed to listeners.
 */
export class AgentProcess {
  private readonly child: ChildProcess;
  private stderrTail = Buffer.alloc(0);
  private stdoutStep = '';
  private stderrStep = '';
  readonly exited: Promise<AgentExit>;
  private done: AgentExit | null = null;

  constructor(
    readonly command: string,
    cwd: string,
    env: Record<string, string>,
    private readonly onOutput?: (stream: 'stdout' | 'stderr', text: string) => void,
  ) {
    this.child = spawn('sh', ['-c', command], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (b: Buffer) => this.output('stdout', b));
    this.child.stderr?.on('data', (b: Buffer) => this.output('stderr', b));
    this.exited = new Promise((resolve) => {
      this.child.on('error', (e) => {
        this.stderrTail = Buffer.concat([this.stderrTail, Buffer.from(`\n${e.message}`)]).subarray(
          -STDERR_TAIL_BYTES,
        );
      });
      this.child.on('close', (code, signal) => {
        this.done = { code, signal, stderrTail: this.stderrTail.toString('utf8') };
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

  /** What the process wrote since the last call (per step, bounded). */
  takeOutput(): AgentOutput {
    const out = { stdout: this.stdoutStep, stderr: this.stderrStep };
    this.stdoutStep = '';
    this.stderrStep = '';
    return out;
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
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH')
        log.warn(`cannot signal agent ${pid}: ${(e as Error).message}`);
    }
  }

  private output(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const text = chunk.toString('utf8');
    if (stream === 'stderr') {
      this.stderrTail = Buffer.concat([this.stderrTail, chunk]).subarray(-STDERR_TAIL_BYTES);
      if (this.stderrStep.length < STEP_OUTPUT_BYTES)
        this.stderrStep += text.slice(0, STEP_OUTPUT_BYTES - this.stderrStep.length);
    } else if (this.stdoutStep.length < STEP_OUTPUT_BYTES) {
      this.stdoutStep += text.slice(0, STEP_OUTPUT_BYTES - this.stdoutStep.length);
    }
    this.onOutput?.(stream, text);
  }
}
