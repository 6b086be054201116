import type { InsideAgentRequest, InsideAgentRun, Sandbox } from '../sandbox/sandbox.js';
import {
  STDERR_TAIL_BYTES,
  StepStream,
  type AgentExit,
  type AgentOutput,
  type OutputListener,
} from './agent-process.js';

/** What starting an agent inside the sandbox needs besides its output handling. */
export type InsideAgentStart = Omit<InsideAgentRequest, 'onOutput'>;

/**
 * An agent program running inside the episode's sandbox (`sandbox:` agents), with the
 * same face as {@link AgentProcess}: its exit (with a stderr tail), its output per step
 * (each stream bounded) and streamed to a listener, and a stop.
 */
export class InsideAgentProcess {
  private stderrTail = Buffer.alloc(0);
  private readonly stdoutStep = new StepStream();
  private readonly stderrStep = new StepStream();
  private done: AgentExit | null = null;

  private constructor(
    private readonly run: InsideAgentRun,
    readonly exited: Promise<AgentExit>,
  ) {}

  /** Starts the agent in `sandbox`; rejects with a SandboxFailure when it cannot start. */
  static async start(
    sandbox: Sandbox & { startAgent: NonNullable<Sandbox['startAgent']> },
    start: InsideAgentStart,
    onOutput?: OutputListener,
  ): Promise<InsideAgentProcess> {
    let self: InsideAgentProcess | null = null;
    const early: ['stdout' | 'stderr', Buffer][] = [];
    const run = await sandbox.startAgent({
      ...start,
      onOutput: (stream, chunk) =>
        self ? self.output(stream, chunk, onOutput) : early.push([stream, chunk]),
    });
    const exited = run.exited.then((e) => {
      const exit: AgentExit = { ...e, stderrTail: proc.stderrTail.toString('utf8') };
      proc.done = exit;
      return exit;
    });
    const proc = new InsideAgentProcess(run, exited);
    self = proc;
    for (const [stream, chunk] of early) proc.output(stream, chunk, onOutput);
    return proc;
  }

  /** The port the agent reaches the endpoint at inside the sandbox. */
  get port(): number {
    return this.run.port;
  }

  /** The exit, once the process has ended. */
  exit(): AgentExit | null {
    return this.done;
  }

  /** What the process wrote since the last call (per step, each stream bounded). */
  takeOutput(): AgentOutput {
    const out = this.stdoutStep.take();
    const err = this.stderrStep.take();
    return {
      stdout: out.text,
      stderr: err.text,
      bytes: { stdout: out.bytes, stderr: err.bytes },
      truncated: { stdout: out.truncated, stderr: err.truncated },
    };
  }

  /** Stops the agent's session (TERM, then KILL) and closes its bridge. */
  stop(): Promise<void> {
    return this.run.stop();
  }

  private output(stream: 'stdout' | 'stderr', chunk: Buffer, listener?: OutputListener): void {
    if (stream === 'stderr')
      this.stderrTail = Buffer.concat([this.stderrTail, chunk]).subarray(-STDERR_TAIL_BYTES);
    const { text, hitCap } = (stream === 'stdout' ? this.stdoutStep : this.stderrStep).add(chunk);
    if (text || hitCap) listener?.(stream, text, hitCap);
  }
}
