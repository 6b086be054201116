import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ToolResult } from '../../../../shared/tool-result';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { StepRow } from '../../../../shared/contract/models';
import { errorText } from '../result';
import { overrideWords, type OverrideTarget } from '../../model/override-words';
import { safeStorage } from '../../model/safe-storage';
import { loadInjectDrafts, saveInjectDrafts, type InjectDrafts } from './inject-drafts-memory';

/**
 * The injection panel's three things to do, one shown at a time under tabs that are always
 * on screen: in a 1024×700 window the panel is a few lines tall, and an override form below
 * the message form was out of sight.
 */
export type InjectSection = 'decide' | 'message' | 'override';

/** The injection panel's drafts and outcome. */
export interface InjectState {
  /** The section chosen by the person; null: the agent's own default (see {@link selectSection}). */
  readonly section: InjectSection | null;
  readonly role: 'system' | 'user';
  readonly mode: 'text' | 'json';
  readonly text: string;
  readonly overrideText: string;
  readonly sending: boolean;
  readonly error: string | null;
  readonly notice: string | null;
  /** A manual agent's next decision: a tool call (name + JSON arguments) or, without a tool, a final answer. */
  readonly decideTool: string;
  readonly decideArgs: string;
  readonly decideText: string;
}

/** What the injection panel does. */
export interface InjectActions {
  setSection(section: InjectSection): void;
  setRole(role: 'system' | 'user'): void;
  setMode(mode: 'text' | 'json'): void;
  setText(text: string): void;
  setOverrideText(text: string): void;
  inject(branch: string): Promise<boolean>;
  /**
   * Overrides the pending result with the draft; `replaced` is that result (see {@link overrideToResult}),
   * `target` the step and tool it belongs to (named in the answer).
   */
  override(branch: string, replaced?: ToolResult | null, target?: OverrideTarget | null): Promise<boolean>;
  setDecision(part: { tool?: string; args?: string; text?: string }): void;
  /**
   * Queues the manual agent's next decision. Once it is taken the arguments and the answer are
   * cleared for the next one (the tool stays: the next call is most often the same tool), as a
   * REPL clears its input; the decision goes into a history that {@link recallDecision} walks.
   */
  decide(branch: string): Promise<boolean>;
  /** ↑ (-1) / ↓ (+1) through the decisions sent, newest first; past the newest, the empty draft again. */
  recallDecision(direction: -1 | 1): void;
  /** Forgets the last action's answer (a step took what it queued, or another branch opened). */
  settle(): void;
  /**
   * Another branch is on screen: the drafts typed for the one left are kept for it, and the new
   * one's come back (or the defaults) — nothing typed for one episode shows on another (issue 33, item 7).
   */
  follow(branch: string | null): void;
}

/** The inject slice. */
export type InjectStore = StoreApi<InjectState & InjectActions>;

/**
 * The section shown: the person's choice, else the next decision for a manual agent (it waits
 * on it) and the message otherwise. A manual agent's section is only there for a manual agent.
 */
export function selectSection(s: Pick<InjectState, 'section'>, manual: boolean): InjectSection {
  if (s.section === null || (s.section === 'decide' && !manual)) return manual ? 'decide' : 'message';
  return s.section;
}

/** Parses the JSON draft, or says what is wrong with it. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, message: `not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * An override draft as a tool result: a JSON result object, or plain text shown as stdout.
 * Plain text over a result that has an exit code is a command that went well: exit 0. Over a
 * list_dir's result (none) the agent was shown "exit 0" while the tool's said "exit —"; and a
 * result given for a held call (`replaced` is `'not-run'`: the tool never runs) has no exit
 * code at all: "exit 0" there read as a command that ran.
 */
export function overrideToResult(
  text: string,
  replaced?: ToolResult | 'not-run' | null,
): ToolResult | string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) {
    const noExit = replaced === 'not-run' || (replaced != null && replaced.exit_code === undefined);
    const exit = noExit ? {} : { exit_code: 0 };
    // No duration: the tool does not run for it (0 read as "0.0 ms" of a run).
    return { ok: true, ...exit, stdout: text, duration_ms: null, bytes: text.length };
  }
  const parsed = parseJson(trimmed);
  if (!parsed.ok) return parsed.message;
  const v = parsed.value as Partial<ToolResult>;
  if (typeof v.ok !== 'boolean') return 'a result object needs "ok": true or false';
  return { duration_ms: null, bytes: 0, ...v } as ToolResult;
}

/** What a person types in the panel, kept per branch (across a reload too). */
type Drafts = InjectDrafts;

/** The drafts of `s`, as kept for its branch. */
const draftsOf = (s: Drafts): Drafts => ({
  section: s.section,
  role: s.role,
  mode: s.mode,
  text: s.text,
  overrideText: s.overrideText,
  decideTool: s.decideTool,
  decideArgs: s.decideArgs,
  decideText: s.decideText,
});

const NO_DRAFTS: Drafts = {
  // The panel's natural first tab (Decision for a manual agent): a new episode opened on the
  // section used last, "Override result" hiding the Decision form.
  section: null,
  role: 'user',
  mode: 'text',
  text: '',
  overrideText: '',
  decideTool: 'execute_shell',
  decideArgs: '{"command": "ls -la"}',
  decideText: '',
};

/** Creates the inject slice over a client; each branch's drafts are kept in `storage` (a reload brings them back). */
export function createInjectStore(
  client: StepboxClient,
  storage: Pick<Storage, 'getItem' | 'setItem'> | null = safeStorage(),
): InjectStore {
  const kept = loadInjectDrafts(NO_DRAFTS, storage);
  let shown: string | null = null;
  /** The decisions sent, oldest first, and where ↑/↓ stands in them (length: the fresh draft). */
  const sent: Pick<InjectState, 'decideTool' | 'decideArgs' | 'decideText'>[] = [];
  let recalled = 0;
  const store = createStore<InjectState & InjectActions>()((set, get) => ({
    section: null,
    // The answer to the last action belongs to the section that did it: a new section starts clean.
    setSection: (section) => set({ section, notice: null, error: null }),
    role: 'user',
    mode: 'text',
    text: '',
    overrideText: '',
    sending: false,
    error: null,
    notice: null,
    decideTool: 'execute_shell',
    decideArgs: '{"command": "ls -la"}',
    decideText: '',
    follow: (branch) => {
      if (branch === shown) return;
      const s = get();
      if (shown !== null) kept.set(shown, draftsOf(s));
      shown = branch;
      set({ ...(branch !== null ? (kept.get(branch) ?? NO_DRAFTS) : NO_DRAFTS), notice: null, error: null });
    },
    settle: () => {
      if (get().notice !== null || get().error !== null) set({ notice: null, error: null });
    },
    setDecision: (part) =>
      set((s) => ({
        decideTool: part.tool ?? s.decideTool,
        decideArgs: part.args ?? s.decideArgs,
        decideText: part.text ?? s.decideText,
        error: null,
      })),
    async decide(branch) {
      const { decideTool, decideArgs, decideText } = get();
      let call: { name: string; arguments: Record<string, unknown> } | undefined;
      if (decideTool.trim()) {
        const parsed = parseJson(decideArgs || '{}');
        if (
          !parsed.ok ||
          typeof parsed.value !== 'object' ||
          parsed.value === null ||
          Array.isArray(parsed.value)
        ) {
          set({ error: parsed.ok ? 'arguments must be a JSON object' : parsed.message, notice: null });
          return false;
        }
        call = { name: decideTool.trim(), arguments: parsed.value as Record<string, unknown> };
      } else if (!decideText.trim()) {
        set({ error: 'name a tool, or write a final answer', notice: null });
        return false;
      }
      set({ sending: true, error: null, notice: null });
      const res = await client.episode.decide({
        id: branch,
        content: decideText.trim() || null,
        ...(call ? { call } : {}),
      });
      set({
        sending: false,
        error: errorText(res),
        notice: res.ok ? 'decision queued: the next step (F10) uses it' : null,
        // Sent: the box is ready for the next decision; the one sent is one ↑ away.
        ...(res.ok ? { decideArgs: '', decideText: '' } : {}),
      });
      if (res.ok) {
        sent.push({ decideTool, decideArgs, decideText });
        recalled = sent.length;
      }
      return res.ok;
    },
    recallDecision(direction) {
      const at = Math.min(sent.length, Math.max(0, recalled + direction));
      if (at === recalled) return;
      recalled = at;
      const d = sent[at];
      set(
        d
          ? { decideTool: d.decideTool, decideArgs: d.decideArgs, decideText: d.decideText, error: null }
          : { decideArgs: '', decideText: '', error: null },
      );
    },
    setRole: (role) => set({ role }),
    setMode: (mode) => set({ mode }),
    setText: (text) => set({ text, error: null, notice: null }),
    setOverrideText: (overrideText) => set({ overrideText, error: null, notice: null }),
    async inject(branch) {
      const { role, mode, text } = get();
      if (!text.trim()) {
        set({ error: 'write a message to inject first', notice: null });
        return false;
      }
      let content = text;
      if (mode === 'json') {
        const parsed = parseJson(text);
        if (!parsed.ok) {
          set({ error: parsed.message, notice: null });
          return false;
        }
        content = JSON.stringify(parsed.value);
      }
      set({ sending: true, error: null, notice: null });
      const res = await client.episode.inject({ id: branch, role, content });
      set({
        sending: false,
        error: errorText(res),
        notice: res.ok ? `injected as ${role}: the agent reads it next` : null,
        text: res.ok ? '' : text,
      });
      return res.ok;
    },
    async override(branch, replaced, target) {
      const result = overrideToResult(get().overrideText, replaced);
      if (typeof result === 'string') {
        set({ error: result, notice: null });
        return false;
      }
      set({ sending: true, error: null, notice: null });
      const res = await client.episode.override({ id: branch, result });
      set({
        sending: false,
        error: errorText(res),
        notice: res.ok ? overrideWords(target ?? null).done : null,
      });
      return res.ok;
    },
  }));
  // Every change to the shown branch's drafts is remembered at once: a reload comes any time.
  store.subscribe((s, was) => {
    if (shown === null) return;
    const now = draftsOf(s);
    const before = draftsOf(was);
    if ((Object.keys(now) as (keyof Drafts)[]).every((k) => now[k] === before[k])) return;
    kept.set(shown, now);
    saveInjectDrafts(kept, NO_DRAFTS, shown, storage);
  });
  return store;
}

/**
 * Why "Inject at this step" cannot send (`noInject`: the stepper's reason, first), and whether
 * it is said in a line under the button: once a message is typed the person means to send it,
 * and a greyed button with its reason only on hover read as broken (disabled-why-held-1024x700).
 */
export function selectInjectWhy(
  s: Pick<InjectState, 'text' | 'sending'>,
  noInject: string | null,
): { readonly why: string | null; readonly shown: boolean } {
  const typed = s.text.trim() !== '';
  const why = noInject ?? (!typed ? 'Write the message first.' : s.sending ? 'Sending…' : null);
  return { why, shown: why !== null && typed && !s.sending };
}

/** True when the draft can be sent. */
export function selectCanInject(s: InjectState): boolean {
  return !s.sending && s.text.trim().length > 0;
}

/**
 * The message field's placeholder, about the step at hand: when the agent reads it (before
 * step `next`) and an example that answers what the last step did, not the same sentence on
 * every episode. `last` is the last recorded step's row (null before the first step): a
 * message always goes in after it. `viewingEarlier`: the window shows an earlier step, and the
 * placeholder says so ("step 4, after step 3" beside step 2 read as a slip). A flag, not the
 * step: the panel does not render again on every slider move (issue 33.9).
 */
export function injectPlaceholder(
  last: Pick<StepRow, 'step' | 'tools' | 'summary' | 'status'> | null,
  mode: 'text' | 'json',
  viewingEarlier = false,
  /**
   * A step runs: a line above the form says why it cannot send, and at 1024×700 the field gives
   * it a line (two, not three: styles.css). The placeholder says when without its example, so
   * it is read whole; the three-line sentence showed two lines and a cut third.
   */
  running = false,
  /** The held step when it is a final answer (selectHeldEndsEpisode): no later step reads a message. */
  endsAt: number | null = null,
): string {
  if (endsAt !== null)
    return `Nothing injected here is read: step ${endsAt}'s final answer ends the episode, so there is no step ${endsAt + 1}.`;
  const next = (last?.step ?? 0) + 1;
  const json = mode === 'json' ? '{"note": "…"}: ' : '';
  // Said first and short, with no example: the field shows three lines, and this is what matters.
  if (last && viewingEarlier)
    return running
      ? `${json}Goes in after step ${last.step}, the latest: the agent reads it at step ${next}.`
      : `${json}Goes in after step ${last.step}, the latest, not after the earlier step you are viewing: the agent reads it at step ${next}.`;
  if (!last || last.tools.length === 0) {
    const when = last && last.step > 0 ? `after step ${last.step}'s answer` : 'before it acts';
    if (mode === 'json') return `${json}what the agent reads at step ${next}, ${when}`;
    return running
      ? `What the agent reads at step ${next}, ${when}`
      : `What the agent reads at step ${next}, ${when}: e.g. “The user also wants the result saved to a file.”`;
  }
  const did = `${last.tools.join(', ')} ${last.summary}`.replace(/\s+/g, ' ').trim();
  const room = running ? 24 : 48;
  const short = did.length > room ? `${did.slice(0, room - 1)}…` : did;
  const failed =
    last.status === 'nonzero_exit' || last.status === 'tool_error' || last.status === 'parse_error';
  if (mode === 'json')
    return `{"after": "${last.tools[0]}", "note": "…"}: what the agent reads at step ${next}`;
  // A step held before its tools has decided its call but not run it: "after step 1 (list_dir .)"
  // read as a step that had run.
  const ran = last.status === 'pending' ? ' runs' : failed ? ' failed' : '';
  const after = `What the agent reads at step ${next}, after step ${last.step} (${short})${ran}`;
  if (running) return after;
  if (last.status === 'pending') return `${after}: e.g. “Check what that changed before you go on.”`;
  return failed
    ? `${after}: e.g. “That failed — read the error and try another way.”`
    : `${after}: e.g. “Check what that changed before you go on.”`;
}
