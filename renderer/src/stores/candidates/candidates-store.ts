import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { CandidateSetView, TypedCandidate } from '../../../../shared/contract/candidates';
import { errorText } from '../result';
import { consentQuestion, underWay, WAITING_FOR_ANSWER, type ConsentAsk } from '../consent-question';
import { firstRangeProblem, type CountRange } from '../../model/count-range';
import { countOf } from '../../../../shared/count-of';

/** “ask the agent … times”: the engine takes 0 to 8 (episode.candidates `n`). */
export const CANDIDATES_N: CountRange = { name: 'ask the agent', min: 0, max: 8 };
/** “then run on … steps”: 0 to 10 (episode.candidates `run_on`). */
export const CANDIDATES_RUN_ON: CountRange = { name: 'then run on', min: 0, max: 10 };
/**
 * “step”: a step the branch has, from 1 to its last (candidates replace it, forked at the one
 * before). The field is the step to replace: one past the last is no step of the branch, and a
 * 3-step episode's hint read "1–4".
 */
export function candidatesStepRange(lastStep: number): CountRange {
  return { name: 'step', min: 1, max: Math.max(1, lastStep) };
}

/** Candidates at a step: ask the agent, type some, try them side by side, pick one. */
export interface CandidatesState {
  /** Step K the candidates follow (they are step K+1), as typed (refused when out of range); null until chosen. */
  readonly at: number | null;
  /** The branch's last step when the section was prepared: the step field's upper bound. */
  readonly lastStep: number;
  /** How many to ask the branch's agent for. */
  readonly n: number;
  /** Typed candidates: one assistant message (JSON) per line, or a tool call as `name {json}`. */
  readonly typed: string;
  readonly runOn: number;
  readonly set: CandidateSetView | null;
  readonly running: 'try' | 'pick' | 'discard' | null;
  readonly error: string | null;
  readonly notice: string | null;
  /**
   * A question for the person: the branch's recorded task asks for a looser sandbox than
   * the defaults (`message` names what); trying waits for allowConsent/denyConsent.
   */
  readonly consentAsk: ConsentAsk<'try'> | null;
}

/** What the candidates section does. */
export interface CandidatesActions {
  /**
   * Opens the section for candidates replacing step `step` (forked at `step - 1`) of a branch
   * whose last step is `lastStep`; with `branch`, warms sandboxes there meanwhile. A step out
   * of range is kept as typed and refused (said beside the field), never clamped.
   */
  prepare(step: number, branch?: string, lastStep?: number): void;
  setN(n: number): void;
  setTyped(text: string): void;
  setRunOn(m: number): void;
  tryAt(branch: string): Promise<boolean>;
  pick(index: number): Promise<string | null>;
  /**
   * Closes the held candidates. `quiet`: another episode took the window (a start from the
   * library), so no "candidates closed" is left in its Replay pane.
   */
  discard(options?: { readonly quiet?: boolean }): Promise<boolean>;
  /** The person allows what the recorded task asks for: the candidates are tried with consent. */
  allowConsent(): void;
  /** The person refuses: no candidate sandbox is started. */
  denyConsent(): void;
  reset(): void;
}

/** The candidates slice. */
export type CandidatesStore = StoreApi<CandidatesState & CandidatesActions>;

const initial: CandidatesState = {
  at: null,
  lastStep: 0,
  n: 2,
  typed: '',
  runOn: 0,
  set: null,
  running: null,
  error: null,
  notice: null,
  consentAsk: null,
};

/**
 * Parses the typed candidates: each non-empty line is an assistant message as JSON
 * (`{"tool_calls": [...]}` or `{"content": "final answer"}`) or a tool call written as
 * `tool_name {"arg": "value"}`. Returns the messages or the first line's problem.
 */
export function parseTyped(
  text: string,
): { ok: true; value: TypedCandidate[] } | { ok: false; error: string } {
  const out: TypedCandidate[] = [];
  const lines = text.split('\n').map((l) => l.trim());
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    const call = /^([A-Za-z_][\w.-]*)\s+(\{.*\})$/.exec(line);
    try {
      if (call) {
        const args: unknown = JSON.parse(call[2]);
        if (typeof args !== 'object' || args === null || Array.isArray(args))
          throw new Error('arguments must be an object');
        out.push({
          content: null,
          tool_calls: [{ type: 'function', function: { name: call[1], arguments: JSON.stringify(args) } }],
        });
        continue;
      }
      const message: unknown = JSON.parse(line);
      if (typeof message !== 'object' || message === null || Array.isArray(message))
        throw new Error('expected an object');
      out.push(message as TypedCandidate);
    } catch (e) {
      return {
        ok: false,
        error: `typed candidate on line ${i + 1}: ${e instanceof Error ? e.message : String(e)}. Write a tool call as read_file {"path": "x.py"} or a message as {"content": "…"}`,
      };
    }
  }
  return { ok: true, value: out };
}

/** What is out of range in the candidates form (step, ask the agent, run on), or null. */
export function selectCandidatesProblem(s: CandidatesState): string | null {
  return firstRangeProblem([
    // The step's bound is known once the window prepared the section for a branch.
    ...(s.at !== null && s.lastStep > 0 ? [[s.at + 1, candidatesStepRange(s.lastStep)] as const] : []),
    [s.n, CANDIDATES_N],
    [s.runOn, CANDIDATES_RUN_ON],
  ]);
}

/** The operation under way, as its button says it: none while the consent question waits for the person. */
export function selectCandidatesUnderWay(s: CandidatesState): CandidatesState['running'] {
  return underWay(s.running, s.consentAsk);
}

/** Why the candidates' buttons wait: the person's answer to the consent question, or the work under way. */
export function selectCandidatesBusyWhy(s: CandidatesState): string | null {
  if (s.consentAsk) return WAITING_FOR_ANSWER;
  return s.running !== null ? 'Waiting for the candidates to finish.' : null;
}

/** What the Replay panel's candidates button says and does at a step of a branch. */
export interface CandidatesEntry {
  readonly label: string;
  /** 'view': show the side-by-side view on what is held or running here; 'prepare': open it for this step. */
  readonly opens: 'view' | 'prepare';
  /** Why it cannot act at this step (the button says it, disabled), or null. */
  readonly why: string | null;
}

/** Step 0 is the setup: no agent decision, no call to try other ones for. */
export const NO_CANDIDATES_AT_SETUP =
  'Step 0 is the setup: the agent made no call there to try others for. Select step 1 or later.';

/**
 * Candidates ask the branch's own agent (episode.candidates takes no other): on a branch whose
 * model endpoint failed, each one asked, and each step run on, calls it again. Typed ones run,
 * but "Continue with" one goes on with that agent too. The way on is a fork with another agent or
 * endpoint (the fork settings' Agent and Model), and candidates tried on that fork.
 */
export const CANDIDATES_NEED_ANOTHER_ENDPOINT =
  'Candidates would each call the model endpoint that failed: fork with another agent or endpoint (Fork settings…, “Agent”), then try candidates on the fork.';

/**
 * The candidates button at step `step` of `branch`. Held candidates belong to the branch and
 * step they were tried at (the set's parent and step K, replacing K+1): they stay held while
 * other episodes open (a pick opens the chosen branch first), so any other branch or step
 * offers to try its own, never "Show the N candidates" of another episode. `againFails`: why the
 * branch's agent cannot go on (way-on.ts, its model endpoint failed), or null; candidates held
 * are still shown, none are offered (a person pressed it and got one failure per candidate).
 */
export function selectCandidatesEntry(
  s: CandidatesState,
  branch: string,
  step: number,
  againFails: string | null = null,
): CandidatesEntry {
  const held = s.set && s.set.parent === branch && s.set.step === step - 1 ? s.set.candidates.length : 0;
  if (held > 0 && step > 0)
    return { label: `Show the ${countOf(held, 'candidate')}`, opens: 'view', why: null };
  // Before the step's own reason: at any step it holds, and it is what a person fixes first.
  if (againFails !== null)
    return {
      label: step === 0 ? 'Try candidates for a step…' : `Try candidates for step ${step}…`,
      opens: 'prepare',
      why: CANDIDATES_NEED_ANOTHER_ENDPOINT,
    };
  if (step === 0)
    return { label: 'Try candidates for a step…', opens: 'prepare', why: NO_CANDIDATES_AT_SETUP };
  // A form being filled (nothing held: it is about the open branch, the slice resets on another) or a try under way.
  const engaged = s.running !== null || (s.set === null && s.at === step - 1);
  return { label: `Try candidates for step ${step}…`, opens: engaged ? 'view' : 'prepare', why: null };
}

/**
 * Why "Try side by side" cannot act, or null: the work under way or the person's answer, then a
 * branch whose model endpoint failed (`againFails`, way-on.ts; a view opened before it failed
 * stays open), then the form's own problem.
 */
export function selectCandidatesTryWhy(s: CandidatesState, againFails: string | null): string | null {
  return (
    selectCandidatesBusyWhy(s) ??
    (againFails !== null ? CANDIDATES_NEED_ANOTHER_ENDPOINT : null) ??
    selectCandidatesProblem(s)
  );
}

export function createCandidatesStore(
  client: StepboxClient,
  hooks: { readonly onBranch?: (branch: string) => void } = {},
): CandidatesStore {
  return createStore<CandidatesState & CandidatesActions>()((set, get) => {
    const question = consentQuestion<'try'>((consentAsk) => set({ consentAsk }));
    return {
      ...initial,
      prepare(step, branch, lastStep) {
        const at = step - 1;
        set({ at, error: null, notice: null, ...(lastStep !== undefined ? { lastStep } : {}) });
        if (selectCandidatesProblem(get()) !== null) return;
        // While the person writes candidates, the engine restores step `at` into warm sandboxes.
        if (branch)
          void client.episode.stageCandidates({
            id: branch,
            step: at,
            count: Math.max(1, Math.min(8, get().n + 2)),
          });
      },
      setN: (n) => set({ n, error: null }),
      setTyped: (typed) => set({ typed, error: null }),
      setRunOn: (runOn) => set({ runOn, error: null }),
      async tryAt(branch) {
        const { at, n, typed, runOn, set: held } = get();
        if (at === null) {
          set({ error: 'choose the step to try candidates for' });
          return false;
        }
        const problem = selectCandidatesProblem(get());
        if (problem) {
          set({ error: problem });
          return false;
        }
        const parsed = parseTyped(typed);
        if (!parsed.ok) {
          set({ error: parsed.error });
          return false;
        }
        if (n === 0 && parsed.value.length === 0) {
          set({ error: 'ask the agent for at least one candidate, or type one' });
          return false;
        }
        // Candidates still held from an earlier try are closed first: one set at a time.
        if (held) await client.episode.discardCandidates({ group: held.group });
        set({ running: 'try', error: null, notice: null, set: null });
        const res = await question.run('try', (allow) =>
          client.episode.candidates({
            id: branch,
            step: at,
            n,
            actions: parsed.value,
            run_on: runOn,
            ...(allow ? { allow } : {}),
          }),
        );
        if (res === null) {
          set({ running: null, notice: 'not tried: the recorded task’s looser sandbox was not allowed' });
          return false;
        }
        set({ running: null, error: errorText(res), set: res.ok ? res.value : null });
        return res.ok;
      },
      async pick(index) {
        const held = get().set;
        if (!held) return null;
        set({ running: 'pick', error: null });
        const res = await client.episode.pickCandidate({ group: held.group, index });
        if (!res.ok) {
          set({ running: null, error: errorText(res) });
          return null;
        }
        hooks.onBranch?.(res.value.branch);
        set({
          ...initial,
          notice: `continuing candidate ${index + 1} on ${res.value.branch}; the others are kept as rejected branches`,
        });
        return res.value.branch;
      },
      async discard(options) {
        const held = get().set;
        if (!held) return true;
        set({ running: 'discard', error: null });
        const res = await client.episode.discardCandidates({ group: held.group });
        set({
          running: null,
          error: errorText(res),
          set: res.ok ? null : held,
          notice: res.ok && !options?.quiet ? 'candidates closed' : null,
        });
        return res.ok;
      },
      allowConsent: () => question.answer(true),
      denyConsent: () => question.answer(false),
      reset: () => {
        question.answer(false);
        set(initial);
      },
    };
  });
}
