import { checkBranch } from '../qa/check-branches.js';
import { loadedBranch } from '../qa/episode-set.js';
import { branchOutcome } from '../trace/branch-outcome.js';
import type { Flag } from '../../../shared/qa/flag.js';
import { ruleLabel } from '../../../shared/qa/rule-label.js';
import { endText, verdictWords, verifierOutputTail } from '../../../shared/end-words.js';
import { taskCheckOf } from '../../../shared/task-check.js';
import { formatDuration } from '../../../shared/format-duration.js';
import { formatBytes } from '../../../shared/format-bytes.js';
import { summarizeSteps, type StepSummary } from '../../../shared/step-summary.js';
import { exitCodeOf } from '../../../shared/exec-wrapper.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { caseRoot, loadCase } from '../cases/case-library.js';
import { caseNameProblem } from '../../../shared/case-name.js';
import { redactEvents, redactValue, type Redaction } from '../export/redact.js';
import type { SnapshotManifest } from '../sandbox/snapshot-store.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import { readLineage } from '../trace/lineage.js';
import { textAt, type SnapshotText } from '../sandbox/snapshot-text.js';
import { diffSides } from '../../../shared/text-lines.js';
import { hostPlaces, sharedAgentSpec, withoutHostPaths } from './host-paths.js';
import { agentVersionOf, agentWords } from '../../../shared/agent-kind.js';
import { cutLongText, cutLongTexts, type TextCut } from '../../../shared/long-text.js';
import { countOf } from '../../../shared/count-of.js';
import { cutNoticeOf, keptWords, type CutNotice } from '../../../shared/cut-notice.js';

/** The format id of the data a shared file embeds (what its viewer reads). */
export const SHARE_FORMAT = 'stepbox.share/1';

/** One changed file of a step, with its text before and after (null: absent or not shown). */
export interface SharedFile {
  readonly path: string;
  readonly change: 'added' | 'modified' | 'deleted';
  readonly before: string | null;
  readonly after: string | null;
  /** Why the text is not there: binary, too large, or over the file's budget. */
  readonly note?: string;
  /** True when the path is a folder: no text, its files listed apart. */
  readonly folder?: boolean;
}

/** A tool result as the inspector's Output tab shows it. */
export interface SharedResult {
  readonly name: string;
  readonly ok: boolean;
  readonly exit_code?: number;
  readonly error?: { readonly code: string; readonly message: string };
  readonly stdout?: string;
  readonly stderr?: string;
  readonly bytes: number;
  /** `bytes` as the window says a size (`9.7 MiB`): the page said "10131605 bytes". */
  readonly size: string;
  readonly truncated?: true;
  /** How long the call took, in the words the window uses (`3.2 ms`, `1.24 s`). */
  readonly duration: string;
}

/**
 * One step as the file shows it: the timeline's line and the inspector's tabs, compact
 * (empty parts left out) so a 10,000-step episode stays a file a browser opens fast.
 */
export interface SharedStep {
  readonly step: number;
  readonly kind: StepSummary['kind'];
  readonly action: string;
  /** A failed call, a non-zero exit or a parse error: the timeline marks the row. */
  readonly bad?: true;
  readonly final?: string;
  readonly parse_error?: string;
  /** The model's raw output (cut at 4,000 characters). */
  readonly raw?: string;
  readonly calls?: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[];
  readonly results?: readonly SharedResult[];
  readonly memory?: StepSummary['memory_writes'];
  readonly injected?: readonly { readonly type: string; readonly summary: string }[];
  readonly errors?: StepSummary['errors'];
  readonly warnings?: StepSummary['warnings'];
  readonly reward?: number;
  /** The model request of the step, when the budget allowed it. */
  readonly request?: unknown;
  /**
   * The texts too long to put in the file whole (tool output, arguments, a request's messages), cut
   * to their head and tail by the window's one cut (shared/long-text.ts), in the window's words.
   */
  readonly cut?: CutNotice;
}

/** Drops the keys whose value is undefined, null or an empty array. */
function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o))
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  return out as T;
}

/**
 * A cut text's place in a shared step in people's words (`execute_shell's stdout`). The window's
 * inspector names the places of its own step detail (renderer/src/model/cut-notice.ts); a shared
 * step is shaped differently, so it is named here.
 */
function placeOf(step: SharedStep, path: string): string {
  const parts = path.split('.');
  const field = parts[parts.length - 1];
  const at = Number(parts[1]);
  switch (parts[0]) {
    case 'results':
      return `${step.results?.[at]?.name ?? 'a call'}'s ${parts[2] === 'error' ? 'error message' : field}`;
    case 'calls':
      return `${step.calls?.[at]?.name ?? 'a call'}'s argument ${parts[3] ?? field}`;
    case 'request':
      return 'a message of the model request';
    case 'final':
      return 'the final answer';
    case 'parse_error':
      return 'the parse error';
    case 'memory':
      return `memory ${step.memory?.[at]?.key ?? ''} (${parts[2] ?? field})`;
    case 'errors':
      return 'an error message';
    case 'warnings':
      return 'a warning';
    case 'injected':
      return 'an intervention';
    default:
      return path;
  }
}

/** A model request cut as a shared step carries it: its long messages' head and tail, and what was cut. */
interface CutRequest {
  readonly value: unknown;
  readonly cuts: readonly TextCut[];
}

/**
 * A step's timeline line and inspector content from its summary and its events, every long text
 * cut to its head and tail (shared/long-text.ts): a 10 MB output is recorded whole, and put whole
 * in the file it made a file of its size and a page that froze (gzip hid it for a repetitive one).
 */
function sharedStep(
  s: StepSummary,
  events: readonly TraceEvent[],
  request: CutRequest | undefined,
  branch: string,
): SharedStep {
  const whole = wholeStep(s, events);
  const { value, cuts } = cutLongTexts(whole);
  const all = [...cuts, ...(request?.cuts ?? []).map((c) => ({ ...c, path: `request.${c.path}` }))];
  const cut = cutNoticeOf(
    all.map((c) => ({ ...c, what: placeOf(value, c.path) })),
    branch,
  );
  return compact({ ...value, request: request?.value, cut: cut ?? undefined });
}

/** A step as its summary and events hold it, texts whole. */
function wholeStep(s: StepSummary, events: readonly TraceEvent[]): SharedStep {
  const results: SharedResult[] = [];
  let raw: string | undefined;
  for (const e of events) {
    if (e.type === 'model_output') raw = e.raw.length > 4000 ? `${e.raw.slice(0, 4000)}…` : e.raw;
    if (e.type !== 'tool_result') continue;
    const r = e.result;
    results.push(
      compact({
        name: e.name,
        ok: r.ok,
        // An agent's own tool's exit is in its output's header: the page said "exit 0" beside it.
        exit_code: exitCodeOf(r) ?? undefined,
        error: r.error ? { code: r.error.code, message: r.error.message } : undefined,
        stdout: r.stdout || undefined,
        stderr: r.stderr || undefined,
        bytes: r.bytes,
        size: formatBytes(r.bytes),
        truncated: r.truncated && (r.truncated.stdout || r.truncated.stderr) ? (true as const) : undefined,
        duration: formatDuration(r.duration_ms),
      }),
    );
  }
  const bad = results.some((r) => !r.ok || (r.exit_code ?? 0) !== 0) || s.parse_error !== null;
  return compact({
    step: s.step,
    kind: s.kind,
    action: s.action,
    bad: bad ? (true as const) : undefined,
    final: s.final ?? undefined,
    parse_error: s.parse_error ?? undefined,
    // A tool step's raw output repeats its calls; keep it for text-written calls and final answers.
    raw: s.kind === 'tool' && !s.calls.length ? raw : s.kind === 'tool' ? undefined : raw,
    calls: s.calls.map((c) => ({ name: c.name, arguments: c.arguments })),
    results,
    memory: s.memory_writes,
    injected: s.injected.map((i) => ({ type: i.type, summary: i.summary })),
    errors: s.errors,
    warnings: s.warnings,
    reward: s.reward ?? undefined,
  });
}

/** A branch of the episode, for the branch tree. */
export interface SharedBranch {
  readonly branch: string;
  readonly parent: string | null;
  readonly fork_step: number | null;
}

/** Everything a shared file shows, embedded once as JSON. */
export interface ShareData {
  readonly format: typeof SHARE_FORMAT;
  readonly episode: string;
  readonly branch: string;
  readonly task: { readonly name: string; readonly goal: string };
  readonly agent: string;
  readonly end: {
    readonly status: string;
    readonly end_reason: string;
    /** Why it ended in people's words (shared/end-words.ts): the header shows it, not `end_reason`. */
    readonly words: string;
    readonly verifier_exit: number | null;
    /** The verifier's verdict as the window and `stepbox show` say it (shared/end-words.ts). */
    readonly verdict: string;
    /** The verifier's final reward (branch-outcome.ts, the one the return folds in), or null. */
    readonly final_reward: number | null;
    /** The last lines the verifier printed, for the file's Details, or null. */
    readonly verifier_output: string | null;
  } | null;
  readonly created: number;
  /** The branch's step count as every view says it (branch-outcome.ts); `steps` also holds step 0, the setup. */
  readonly step_count: number;
  readonly steps: readonly SharedStep[];
  /** QA's flags, each with its rule's label for people (the id stays in the tooltip). */
  readonly flags: readonly (Flag & { readonly label: string })[];
  /** step → changed files (steps with a snapshot that changed something). */
  readonly files: Readonly<Record<number, readonly SharedFile[]>>;
  readonly branches: readonly SharedBranch[];
  /** The case walkthrough (Markdown) when the episode ran a case's task. */
  readonly walkthrough: { readonly name: string; readonly markdown: string } | null;
  readonly redacted: boolean;
  /** What was left out to keep the file small (model requests, file texts). */
  readonly omitted: readonly string[];
}

/**
 * Budgets that keep a 10,000-step file openable: requests and file texts beyond them are left out,
 * and said so. Each text is cut to its head and tail first (shared/long-text.ts).
 */
export interface ShareBudget {
  readonly requestBytes: number;
  readonly fileBytes: number;
}

const DEFAULT_BUDGET: ShareBudget = {
  requestBytes: 4 * 1024 * 1024,
  fileBytes: 8 * 1024 * 1024,
};

/** The case whose task an episode ran (its task path in a case folder, or a case of the task's name). */
function walkthroughOf(taskPath: string | null, taskName: string): ShareData['walkthrough'] {
  const fromPath = taskPath ? /\/([a-z0-9-]+)\/(?:fixed\/)?task\.json$/.exec(taskPath)?.[1] : undefined;
  for (const name of [fromPath, taskName]) {
    // A recorded task's name is the trace's to make (`../../x`): only a case name is looked up.
    if (!name || caseNameProblem(name) !== null || !caseRoot(name)) continue;
    const spec = loadCase(name);
    if (spec.readme) return { name, markdown: spec.readme };
  }
  return null;
}

/**
 * Collects what `stepbox share` embeds for a branch: its lineage's steps (summary, events,
 * the model request while the budget lasts), QA flags, each step's changed files with their
 * text before and after (from the snapshot store, within budget), the episode's branch tree
 * and a case's walkthrough — every string passed through the `--redact` options first.
 */
export async function shareData(
  store: DiskEpisodeStore,
  id: string,
  redaction: Redaction,
  budget: ShareBudget = DEFAULT_BUDGET,
): Promise<ShareData> {
  const info = store.resolve(id);
  const lineage = readLineage(store, info);
  const header = lineage.header;
  const raw: TraceEvent[] = [header, ...lineage.events, ...lineage.partial];
  const events = redactEvents(raw, redaction);
  // The header's words are the trace's: a goal of megabytes is cut as any long text is.
  const task = cutLongTexts(
    redactValue({ name: String(header.task.name ?? ''), goal: String(header.task.goal ?? '') }, redaction),
  ).value;
  // The branch's flags and step count as `check`, `show` and the window give them: QA over the
  // branch's own trace with the engine's references (a fork's inherited steps are its
  // parent's to judge; checked across two files, the numbering raised `structure` flags).
  const own = loadedBranch(info, store.readTrace(info));
  const check = await checkBranch(own, store, { open: own.trace.end === null });
  // A flag's evidence quotes the agent's text (an output, an answer): cut as the steps are.
  const flags = cutLongTexts(redactValue(check.flags, redaction)).value.map((f) => ({
    ...f,
    label: ruleLabel(f.rule),
  }));
  const outcome = branchOutcome(header, [...lineage.events, ...lineage.partial]);
  const summaries = summarizeSteps(events);
  const omitted: string[] = [];

  const byStep = new Map<number, TraceEvent[]>();
  const requests = new Map<number, CutRequest>();
  let requestBytes = 0;
  let requestsLeftOut = 0;
  for (const e of events) {
    if (e.type === 'header') continue;
    if (e.type === 'model_request') {
      // Measured cut: a request carrying a 10 MB output is kept as its head and tail, not left out.
      if (e.request === undefined || e.request === null) continue;
      const request = cutLongTexts(e.request);
      const size = JSON.stringify(request.value).length;
      if (requestBytes + size <= budget.requestBytes) {
        requests.set(e.step, request);
        requestBytes += size;
      } else requestsLeftOut++;
      continue;
    }
    if (e.type !== 'model_output' && e.type !== 'tool_result') continue;
    const list = byStep.get(e.step) ?? [];
    list.push(e);
    byStep.set(e.step, list);
  }
  if (requestsLeftOut) omitted.push(`${requestsLeftOut} model requests (over ${budget.requestBytes} bytes)`);
  const steps = summaries.map((s) =>
    sharedStep(s, byStep.get(s.step) ?? [], requests.get(s.step), info.branch),
  );
  const cutSteps = steps.filter((s) => s.cut).map((s) => s.step);
  if (cutSteps.length)
    omitted.push(
      `the middle of long texts at ${countOf(cutSteps.length, 'step')} (${cutSteps.slice(0, 5).join(', ')}${cutSteps.length > 5 ? ', …' : ''}), each shown as ${keptWords()}: npx stepbox show ${info.branch} --json prints them whole`,
    );

  // Files: each snapshot's changed paths, text from the manifest before and after it.
  const snapshots = store.snapshots(info.episode);
  const manifests = new Map<string, SnapshotManifest | null>();
  const manifest = async (mid: string | null) => {
    if (!mid) return null;
    if (!manifests.has(mid)) manifests.set(mid, await snapshots.getManifest(mid).catch(() => null));
    return manifests.get(mid) ?? null;
  };
  const files: Record<number, SharedFile[]> = {};
  let fileBytes = 0;
  let textsLeftOut = 0;
  let previous: string | null = null;
  for (const e of raw) {
    if (e.type !== 'snapshot') continue;
    const before = previous;
    previous = e.manifest;
    if (e.step === 0 || e.changed.length === 0) continue;
    const [a, b] = [await manifest(before), await manifest(e.manifest)];
    const out: SharedFile[] = [];
    for (const c of e.changed.slice(0, 200)) {
      if (fileBytes >= budget.fileBytes) {
        textsLeftOut++;
        out.push({
          path: c.path,
          change: c.change,
          before: null,
          after: null,
          note: 'left out: the file budget is spent',
        });
        continue;
      }
      const unread: SnapshotText = { text: null, binary: false };
      const [x, y]: SnapshotText[] = await Promise.all([
        a ? textAt(snapshots, a, c.path).catch(() => unread) : unread,
        b ? textAt(snapshots, b, c.path).catch(() => unread) : unread,
      ]);
      // The window's one cut: head and tail, the mark saying in place how much is left out.
      const cut = (t: string | null) => (t === null ? t : cutLongText(t).text);
      const [bt, at] = diffSides(cut(x.text), cut(y.text));
      fileBytes += (bt?.length ?? 0) + (at?.length ?? 0);
      out.push({
        path: c.path,
        change: c.change,
        before: bt === null ? null : redactValue(bt, redaction),
        after: at === null ? null : redactValue(at, redaction),
        ...(x.binary || y.binary ? { note: 'binary' } : {}),
        ...(x.folder || y.folder ? { folder: true } : {}),
      });
    }
    files[e.step] = out;
  }
  if (textsLeftOut)
    omitted.push(`the text of ${textsLeftOut} changed files (over ${budget.fileBytes} bytes)`);

  const branches = store.listBranches(info.episode).map((b) => ({
    branch: b.branch,
    parent: b.parentBranch,
    fork_step: b.forkStep,
  }));
  const end =
    raw[raw.length - 1]?.type === 'end'
      ? (raw[raw.length - 1] as Extract<TraceEvent, { type: 'end' }>)
      : null;
  const walk = walkthroughOf(header.task_path, String(header.task.name ?? ''));
  // Where things are on this machine stays on it (host-paths.ts): the file goes to others.
  const places = hostPlaces(header, store.home);
  return withoutHostPaths<ShareData>(
    {
      format: SHARE_FORMAT,
      episode: info.episode,
      branch: info.branch,
      task,
      agent: sharedAgentSpec(
        redactValue(agentWords(header.agent.spec, agentVersionOf(header.agent)), redaction),
        places,
      ),
      end: end
        ? {
            status: end.status,
            end_reason: end.end_reason,
            words: endText(end.status, end.end_reason, end.verifier?.success ?? null),
            verifier_exit: end.verifier?.exit_code ?? null,
            // A check that did not run is named: the task's command, redacted as the goal is.
            verdict: redactValue(
              verdictWords(end.verifier, { status: end.status, check: taskCheckOf(header.task) }),
              redaction,
            ),
            final_reward: outcome.final_reward,
            // Its last lines, and a last line of megabytes cut: the sandbox's program printed it.
            verifier_output: cutLongTexts(redactValue(verifierOutputTail(end.verifier), redaction)).value,
          }
        : null,
      created: header.created,
      step_count: outcome.steps,
      steps,
      flags,
      files,
      branches,
      walkthrough: walk ? { name: walk.name, markdown: redactValue(walk.markdown, redaction) } : null,
      redacted: redaction.fields.size + redaction.patterns.length > 0,
      omitted,
    },
    places,
  );
}
