import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { ResponseOf } from '../../../../shared/contract/operations';
import type {
  Consent,
  ReplayReport,
  ReplayStepVerdict,
  RolledBack,
} from '../../../../shared/contract/models';
import type { Result } from '../../../../shared/result';
import { runsOwnProgramSpec } from '../../../../shared/agent-kind';
import { errorText } from '../result';
import { consentQuestion, underWay, WAITING_FOR_ANSWER } from '../consent-question';

/** An operation the replay controls run. */
export type ReplayOp = 'rollback' | 'fork' | 'reopen' | 'whatif' | 'replay' | 'compare';

/** A what-if's outcome. */
export type WhatIfResult = ResponseOf<'episode.whatIf'>;
/** Two branches compared step by step. */
export type Comparison = ResponseOf<'episode.compare'>;

/** Replay controls: rollback, fork, what-if, re-execution and branch comparison. */
export interface ReplayState {
  readonly running: ReplayOp | null;
  readonly error: string | null;
  readonly notice: string | null;
  readonly whatIfArgs: string;
  readonly whatIfResult: WhatIfResult | null;
  readonly report: ReplayReport | null;
  readonly compareWith: string;
  readonly comparison: Comparison | null;
  /**
   * What the two sides are called when they are not branches of one episode (a case's broken and
   * fixed runs, compared from its drawer); null: "this branch" and "other".
   */
  readonly compareNames: { readonly a: string; readonly b: string } | null;
  /**
   * A question for the person: the recorded task asks for a looser sandbox than the
   * defaults (`message` names what); the operation waits for allowConsent/denyConsent.
   */
  readonly consentAsk: { readonly op: ReplayOp; readonly message: string } | null;
  /** The Replay panel's "Agent" for Fork and Reopen: empty continues with the recorded agent. */
  readonly agent: string;
  /** Its "Its model calls answered by", for an agent that runs its own program (exec:, sandbox:). */
  readonly model: string;
  /**
   * The last fork or reopen was asked from the fork settings dialog: its error is said there.
   * One from the panel's buttons is not, in a dialog it opened (see {@link selectSettingsError}).
   */
  readonly askedInSettings: boolean;
  /**
   * The fork settings dialog is open. In the slice, not the Replay pane: Inject and Sandbox open
   * it too, when the recorded agent cannot go on (way-on.ts `againFails`).
   */
  readonly settingsOpen: boolean;
}

/** What the replay controls do. */
export interface ReplayActions {
  rollback(branch: string, step: number): Promise<boolean>;
  /** Forks at step k; `from` says the fork settings dialog asked (its error is said there). */
  fork(branch: string, step: number, from?: 'settings'): Promise<string | null>;
  /** Reopens a recorded branch at step k in a fresh sandbox (continuing writes a new branch). */
  reopen(branch: string, step: number, from?: 'settings'): Promise<string | null>;
  setWhatIfArgs(text: string): void;
  whatIf(branch: string, step: number, tool: string): Promise<boolean>;
  replay(branch: string): Promise<boolean>;
  setCompareWith(branch: string): void;
  compare(branch: string): Promise<boolean>;
  /**
   * Compares two runs of different episodes (a case's broken and fixed runs), named: `a` is the
   * open branch. The same step-aligned comparison as two branches of one episode.
   */
  compareRuns(
    a: { readonly branch: string; readonly name: string },
    b: { readonly branch: string; readonly name: string },
  ): Promise<boolean>;
  /** The person allows what the recorded task asks for: the waiting operation is retried with consent. */
  allowConsent(): void;
  setAgent(agent: string): void;
  /** Opens or closes the fork settings dialog. */
  showSettings(open: boolean): void;
  /** The person dismisses the panel's answer (its room goes back to the buttons). */
  dismissNotice(): void;
  setModel(model: string): void;
  /** The person refuses: the waiting operation ends without a sandbox. */
  denyConsent(): void;
  reset(): void;
}

/** The replay slice. */
export type ReplayStore = StoreApi<ReplayState & ReplayActions>;

const initial: ReplayState = {
  running: null,
  error: null,
  notice: null,
  whatIfArgs: '',
  whatIfResult: null,
  report: null,
  compareWith: '',
  comparison: null,
  compareNames: null,
  consentAsk: null,
  agent: '',
  model: '',
  askedInSettings: false,
  settingsOpen: false,
};

/** The agent fields of a fork or reopen: none when "Agent" is empty (the recorded agent goes on). */
export function agentFields(state: Pick<ReplayState, 'agent' | 'model'>): {
  agent?: string;
  agent_options?: { model: string };
} {
  const agent = state.agent.trim();
  if (!agent) return {};
  const model = state.model.trim();
  return runsOwnProgramSpec(agent) && model ? { agent, agent_options: { model } } : { agent };
}

/**
 * A fork or reopen that was refused, said as one that made nothing: beside the branch on screen
 * (one a person had stopped: "interrupted: a person stopped it") the bare "Agent: no file at …"
 * read as that branch's end, as if the fork had started and been stopped.
 */
export function notStarted(op: 'fork' | 'reopen', step: number, res: Result<unknown>): string | null {
  const why = errorText(res);
  return why === null ? null : `${op === 'fork' ? 'Fork' : 'Reopen'} at step ${step} did not start: ${why}`;
}

/** How many differing files a step's line names before "+N more". */
const FILES_SHOWN = 4;

/** A re-executed step in words: its mark (what differed, if anything), its results and its files. */
export interface ReplayStepWords {
  readonly same: boolean;
  readonly mark: string;
  readonly results: string;
  readonly files: string;
}

/**
 * The step since which each re-executed step's files differ, when they differ only as they
 * already did: its own results matched and every file differing after it differed after the
 * step before. Null where the step's own difference begins (or none). Step 2 of the clock
 * journey read "✗ files differ" for the file step 1 wrote, as if step 2 had changed it.
 */
export function filesDifferSince(steps: readonly ReplayStepVerdict[]): (number | null)[] {
  const since: (number | null)[] = [];
  steps.forEach((v, i) => {
    const prev = i > 0 ? steps[i - 1] : undefined;
    const before = new Set(prev && !prev.workspace_match ? prev.files.map((f) => f.path) : []);
    const carried =
      prev !== undefined &&
      prev.step === v.step - 1 &&
      v.verdict !== 'diverged' &&
      !v.workspace_match &&
      v.files.length > 0 &&
      v.files.every((f) => before.has(f.path));
    since.push(carried ? (since[i - 1] ?? prev.step) : null);
  });
  return since;
}

/** A recorded or re-executed value on one short line; a line break shows as `\n`, not a space. */
export function valueLine(v: unknown, max = 60): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  const line = (text ?? 'nothing').replace(/\r?\n/g, '\\n').replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * One re-executed step's verdict and its detail, from one rule so they agree: the mark names what
 * differed (a step whose own results matched beside files still differing read "✗ diverged"
 * beside "same results"), and since when files differ that an earlier step changed
 * (`since`, from {@link filesDifferSince}).
 */
export function replayStepWords(v: ReplayStepVerdict, since: number | null = null): ReplayStepWords {
  const resultsDiffer = v.verdict === 'diverged';
  const results =
    v.verdict === 'match'
      ? 'same results'
      : v.verdict === 'no_calls'
        ? 'no tool call'
        : `results differ: ${v.fields.join(', ')}`;
  const named = v.files.slice(0, FILES_SHOWN).map((f) => f.path);
  const more = v.files.length - named.length;
  const files = v.workspace_match
    ? 'same files'
    : named.length === 0
      ? 'files differ'
      : `files differ: ${named.join(', ')}${more > 0 ? ` (+${more} more)` : ''}`;
  const same = !resultsDiffer && v.workspace_match;
  const mark = same
    ? '✓ match'
    : resultsDiffer
      ? '✗ results differ'
      : since !== null
        ? `✗ files differ (since step ${since})`
        : '✗ files differ';
  return { same, mark, results, files };
}

/** The operation under way, as its button says it: none while the consent question waits for the person. */
export function selectUnderWay(s: ReplayState): ReplayOp | null {
  return underWay(s.running, s.consentAsk);
}

/**
 * The error the fork settings dialog shows: only the answer to its own Fork or Reopen. A dialog
 * opened by the panel's error (one naming "Agent"), or opened after it, showed that error in red
 * before the person had typed or pressed anything in it; the panel says it, and the dialog asks.
 * Typing clears it (setAgent, setModel).
 */
export function selectSettingsError(s: Pick<ReplayState, 'error' | 'askedInSettings'>): string | null {
  return s.askedInSettings ? s.error : null;
}

/** Why the panel's buttons wait: the person's answer to the consent question, or the operation under way. */
export function selectBusyWhy(s: ReplayState): string | null {
  if (s.consentAsk) return WAITING_FOR_ANSWER;
  return s.running !== null ? `Waiting for the ${s.running} to finish.` : null;
}

/** Hooks the app gives the replay slice: open a new branch, reload after a rollback. */
export interface ReplayHooks {
  readonly onBranch?: (branch: string) => void;
  readonly onRolledBack?: (branch: string, step: number) => void;
  /** A rollback answered: the engine's word of it (what it dropped), before the window moves on. */
  readonly rolledBack?: (rollback: RolledBack) => void;
}

/** Creates the replay slice over a client. */
export function createReplayStore(client: StepboxClient, hooks: ReplayHooks = {}): ReplayStore {
  return createStore<ReplayState & ReplayActions>()((set, get) => {
    const question = consentQuestion<ReplayOp>((consentAsk) => set({ consentAsk }));
    /** Runs an operation that may rebuild a sandbox from a recorded task, asking on `consent_required`. */
    async function withConsent<T>(
      op: ReplayOp,
      call: (allow?: Consent) => Promise<Result<T>>,
    ): Promise<Result<T> | null> {
      const res = await question.run(op, call);
      if (res === null)
        set({ running: null, notice: 'not run: the recorded task’s looser sandbox was not allowed' });
      return res;
    }
    return {
      ...initial,
      async rollback(branch, step) {
        set({ running: 'rollback', error: null, notice: null, askedInSettings: false });
        // Noted before the call, as the window moves off the branch while it runs (its terminal
        // follows); what it dropped comes with the answer.
        hooks.rolledBack?.({
          from: branch,
          to_step: step,
          dropped: { injected: [], overridden: [], typed: [] },
        });
        const res = await client.episode.rollback({ id: branch, step });
        if (!res.ok) {
          set({ running: null, error: errorText(res) });
          return false;
        }
        if (res.value.reason?.rollback) hooks.rolledBack?.(res.value.reason.rollback);
        // Opening another branch resets this slice, so the notice is set after the hook.
        const moved = res.value.branch !== branch;
        if (moved) hooks.onBranch?.(res.value.branch);
        else hooks.onRolledBack?.(branch, step);
        set({
          running: null,
          notice: moved
            ? `rolled back to step ${step} — see the Inspector`
            : `sandbox rolled back to step ${step}: the next step starts a new branch from step ${step}`,
        });
        return true;
      },
      async fork(branch, step, from) {
        set({ running: 'fork', error: null, notice: null, askedInSettings: from === 'settings' });
        const res = await withConsent('fork', (allow) =>
          client.episode.fork({ id: branch, step, ...agentFields(get()), ...(allow ? { allow } : {}) }),
        );
        if (!res) return null;
        if (!res.ok) {
          set({ running: null, error: notStarted('fork', step, res) });
          return null;
        }
        hooks.onBranch?.(res.value.branch);
        set({ running: null, notice: `forked at step ${step} — see the Inspector` });
        return res.value.branch;
      },
      async reopen(branch, step, from) {
        set({ running: 'reopen', error: null, notice: null, askedInSettings: from === 'settings' });
        const res = await withConsent('reopen', (allow) =>
          client.episode.reopen({ id: branch, step, ...agentFields(get()), ...(allow ? { allow } : {}) }),
        );
        if (!res) return null;
        if (!res.ok) {
          set({ running: null, error: notStarted('reopen', step, res) });
          return null;
        }
        hooks.onBranch?.(res.value.branch);
        set({ running: null, notice: `reopened at step ${step} — see the Inspector` });
        return res.value.branch;
      },
      setWhatIfArgs: (whatIfArgs) => set({ whatIfArgs, error: null }),
      async whatIf(branch, step, tool) {
        let args: Record<string, unknown>;
        try {
          const parsed: unknown = JSON.parse(get().whatIfArgs);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
            throw new Error('expected an object');
          args = parsed as Record<string, unknown>;
        } catch (e) {
          set({ error: `arguments are not a JSON object: ${e instanceof Error ? e.message : String(e)}` });
          return false;
        }
        set({ running: 'whatif', error: null, notice: null, whatIfResult: null, askedInSettings: false });
        const res = await withConsent('whatif', (allow) =>
          client.episode.whatIf({
            id: branch,
            step,
            call: { name: tool, arguments: args },
            ...(allow ? { allow } : {}),
          }),
        );
        if (!res) return false;
        set({ running: null, error: errorText(res), whatIfResult: res.ok ? res.value : null });
        return res.ok;
      },
      async replay(branch) {
        set({ running: 'replay', error: null, notice: null, report: null, askedInSettings: false });
        const res = await withConsent('replay', (allow) =>
          client.episode.replayVerify({ id: branch, ...(allow ? { allow } : {}) }),
        );
        if (!res) return false;
        set({ running: null, error: errorText(res), report: res.ok ? res.value : null });
        return res.ok;
      },
      setCompareWith: (compareWith) => set({ compareWith, compareNames: null, error: null }),
      async compare(branch) {
        const other = get().compareWith;
        if (!other) {
          set({ error: 'pick a branch to compare with' });
          return false;
        }
        set({ running: 'compare', error: null, comparison: null, askedInSettings: false });
        const res = await client.episode.compare({ a: branch, b: other });
        set({ running: null, error: errorText(res), comparison: res.ok ? res.value : null });
        return res.ok;
      },
      async compareRuns(a, b) {
        set({ compareWith: b.branch, compareNames: { a: a.name, b: b.name } });
        return get().compare(a.branch);
      },
      setAgent: (agent) => set({ agent, error: null }),
      showSettings: (settingsOpen) => set({ settingsOpen }),
      dismissNotice: () => set({ notice: null }),
      setModel: (model) => set({ model, error: null }),
      allowConsent: () => question.answer(true),
      denyConsent: () => question.answer(false),
      reset: () => {
        question.answer(false);
        set(initial);
      },
    };
  });
}
