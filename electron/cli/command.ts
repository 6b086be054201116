/** Where a command writes: stdout carries results (one JSON document with --json), stderr progress and logs. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: NodeJS.ProcessEnv;
}

/** Exit codes (Contracts: CLI). */
export const EXIT = { ok: 0, failed: 1, usage: 2, infra: 3 } as const;

/** One `stepbox` command: its help (with an example) and its entry point returning an exit code. */
export interface CliCommand {
  readonly name: string;
  readonly summary: string;
  /** Full `--help` text; must include at least one example. */
  readonly help: string;
  /**
   * True for commands that attach the user's terminal to a sandbox shell (its escape
   * sequences are the point); every other command's output is made terminal-safe.
   */
  readonly rawTerminal?: boolean;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** A usage error: printed with the command's help hint, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An infrastructure error (no Docker, no image): exit 3; `fix` is the command that fixes it. */
export class InfraError extends Error {
  override readonly name = 'InfraError';
  constructor(
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}
