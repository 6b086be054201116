import type { InsideAgentRequest, InsideAgentRun, Sandbox } from '../sandbox/sandbox.js';
import { ProcessOutput, type AgentExit, type AgentOutput, type OutputListener } from './agent-process.js';

/** What starting an agent inside the sandbox needs besides its output handling. */
export type InsideAgentStart = Omit<InsideAgentRequest, 'onOutput'>;

/**
 * An agent program running inside the episode's sandbox (`sandbox:` agents), with the
 * same face as {@link AgentProcess}: its exit (with a stderr tail), its output per step
 * (each stream bounded, {@link ProcessOutput}) and streamed to a listener, and a stop.
 */
export class InsideAgentProcess {
  private done: AgentExit | null = null;

  private constructor(
    private readonly run: InsideAgentRun,
    private readonly output: ProcessOutput,
    readonly exited: Promise<AgentExit>,
  ) {}

  /** Starts the agent through its sandbox's `startAgent`; rejects with a SandboxFailure when it cannot start. */
  static async start(
    startAgent: NonNullable<Sandbox['startAgent']>,
    start: InsideAgentStart,
    onOutput?: OutputListener,
  ): Promise<InsideAgentProcess> {
    const output = new ProcessOutput(onOutput);
    const run = await startAgent({
      ...start,
      onOutput: (stream, chunk) => output.add(stream, chunk),
    });
    const exited = run.exited.then((e) => {
      const exit: AgentExit = { ...e, stderrTail: output.stderrTail() };
      proc.done = exit;
      return exit;
    });
    const proc = new InsideAgentProcess(run, output, exited);
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
    return this.output.take();
  }

  /** Stops the agent's session (TERM, then KILL) and closes its bridge. */
  stop(): Promise<void> {
    return this.run.stop();
  }
}
