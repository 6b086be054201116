import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { TraceEvent } from '../../../../shared/trace-events';

/** What an exec: agent's own process wrote during one step. */
export interface StepOutput {
  readonly stdout: string;
  readonly stderr: string;
  /** A stream wrote more than the step's cap; the rest was dropped. */
  readonly truncated: { readonly stdout: boolean; readonly stderr: boolean };
  /** Everything each stream wrote, when the step's record says (live output does not know yet). */
  readonly bytes: { readonly stdout: number; readonly stderr: number } | null;
}

/** The live output of the followed branch, per step, as it arrives. */
export interface AgentOutputState {
  readonly branch: string | null;
  readonly steps: Readonly<Record<number, StepOutput>>;
}

/** What the agent-output slice does. */
export interface AgentOutputActions {
  /** Follows a branch's live output (null: none); output of another branch is dropped. */
  follow(branch: string | null): void;
  dispose(): void;
}

/** The agent-output slice. */
export type AgentOutputStore = StoreApi<AgentOutputState & AgentOutputActions>;

/** Steps of live output kept (older ones are in the trace, read with the step's detail). */
const KEEP_STEPS = 20;
/** A guard on one step's stream in the window; the engine already stops each at 64 KiB. */
const MAX_CHARS = 128 * 1024;

const EMPTY: StepOutput = {
  stdout: '',
  stderr: '',
  truncated: { stdout: false, stderr: false },
  bytes: null,
};

/** Creates the slice; it listens to `episode.agentOutput` for the followed branch. */
export function createAgentOutputStore(client: StepboxClient): AgentOutputStore {
  const store = createStore<AgentOutputState & AgentOutputActions>()((set, get) => ({
    branch: null,
    steps: {},
    follow(branch) {
      if (branch !== get().branch) set({ branch, steps: {} });
    },
    dispose() {
      off();
    },
  }));
  const off = client.onEpisodeAgentOutput(({ branch, step, stream, data, truncated }) => {
    const s = store.getState();
    if (branch !== s.branch) return;
    const was = s.steps[step] ?? EMPTY;
    const text = (was[stream] + data).slice(0, MAX_CHARS);
    const next: Record<number, StepOutput> = {
      ...s.steps,
      [step]: {
        ...was,
        [stream]: text,
        truncated: { ...was.truncated, [stream]: was.truncated[stream] || truncated },
      },
    };
    const keys = Object.keys(next).map(Number);
    for (const k of keys.sort((a, b) => a - b).slice(0, Math.max(0, keys.length - KEEP_STEPS)))
      delete next[k];
    store.setState({ steps: next });
  });
  return store;
}

/**
 * A step's recorded agent output (its `agent_output` event: the trace is the source of
 * truth once the step has one), or null; the window falls back to what arrived live.
 */
export function recordedStepOutput(events: readonly TraceEvent[] | null): StepOutput | null {
  const e = events?.find((x) => x.type === 'agent_output');
  return e && e.type === 'agent_output'
    ? { stdout: e.stdout, stderr: e.stderr, truncated: e.truncated, bytes: e.bytes }
    : null;
}

/**
 * The line above a step's agent output: the span it covers, said exactly, and the agent by name
 * and version when a recipe ran it (`agent`: null for another program, named by its command). The engine keeps
 * what the program wrote from the end of step k-1 to the end of step k, so a program that
 * prints a call's outcome once it returns ("write_file -> ok") prints step k-1's under step
 * k; "printed while step 2 ran" above step 1's line read as step 2's own.
 */
export function agentOutputCaption(step: number, running: boolean, agent: string | null = null): string {
  // A recipe's agent is named with its version (`codex 0.171.0`, agentWords), as show and share name it.
  const program = agent ? `the agent program, ${agent},` : 'the agent program';
  if (running) return `Step ${step} is running: what ${program} prints appears here as it prints it.`;
  if (step <= 1) return `What ${program} printed from its start to the end of step ${step}.`;
  return `What ${program} printed after step ${step - 1} ended, up to the end of step ${step}: a line it prints once step ${step - 1}’s call returns shows here, not under step ${step - 1}.`;
}
