/*
 * What an agent's own process wrote (exec:, sandbox:): the harness records it per step and
 * shows it live. Defined beside the Agent interface, which names it; the process that
 * produces it lives in external/.
 */

/** Output the process wrote since the last `takeOutput()` (an exec: or sandbox: agent's own process): each stream's first bytes. */
export interface AgentOutput {
  readonly stdout: string;
  readonly stderr: string;
  /** Everything each stream wrote, kept or not. */
  readonly bytes: { readonly stdout: number; readonly stderr: number };
  /** True when a stream wrote more than the step's cap and the rest was dropped. */
  readonly truncated: { readonly stdout: boolean; readonly stderr: boolean };
}

/** Output as it is written: the kept text, and `truncated` once when the step's cap is reached. */
export type OutputListener = (stream: 'stdout' | 'stderr', text: string, truncated: boolean) => void;
