import { checkEpisode } from '../../../shared/qa/check-episode.js';
import type { Flag } from '../../../shared/qa/flag.js';
import { stepRewards } from '../../../shared/rewards.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { ChangedPath } from '../../../shared/trace-events.js';
import type { EpisodeEnv } from '../harness/episode-factory.js';
import type { EpisodeRunner } from '../harness/episode-runner.js';
import { forkEpisode } from '../harness/fork.js';
import { HarnessError } from '../harness/harness-error.js';
import { logger } from '../log.js';
import { newId } from '../trace/episode-ids.js';
import { candidateAgent, seededCandidateAgent, type CandidateMessage } from './candidate-agent.js';
import { continuationOptions } from '../agents/agent-spec.js';
import type { Agent } from '../agents/agent.js';
import { recordChoice } from './choice-log.js';

const log = logger('candidates');

/** Where a candidate's next action comes from. */
export type CandidateSource =
  /** The branch's own agent decides (an `openai:` agent with its seed varied and recorded). */
  | { readonly kind: 'model'; readonly seed?: number }
  /** An assistant message a person typed, or a line of a candidate file. */
  | { readonly kind: 'given'; readonly origin: 'person' | 'file'; readonly message: CandidateMessage };

/** End reasons of candidate branches that were not continued. */
export const CANDIDATE_REJECTED = 'candidate_rejected';
export const CANDIDATE_NOT_PICKED = 'candidate_not_picked';
/** End reason of the live branch a candidate was picked at: the episode went on in that candidate. */
export const CONTINUED_IN_CANDIDATE = 'continued_in_candidate';

/** The decision a candidate made at step K+1. */
export interface CandidateAction {
  readonly calls: { name: string; arguments: Record<string, unknown> }[];
  readonly final: string | null;
  /** Set when the output did not parse into an action (the agent then sees this error). */
  readonly parse_error?: string;
}

/** One candidate tried in its own fork (the `--json` shape, plus index, origin and state). */
export interface CandidateOutcome {
  readonly index: number;
  readonly origin: 'model' | 'person' | 'file';
  readonly seed: number | null;
  readonly branch: string;
  readonly action: CandidateAction;
  /** What each call of step K+1 returned, as the agent saw it. */
  readonly result: ToolResult[];
  /** The workspace after the candidate's last step. */
  readonly tree_hash: string | null;
  /** Files step K+1 (and any run-on steps) changed against snapshot K. */
  readonly files_changed: ChangedPath[];
  /** Step K+1's reward; the final reward when the candidate ended the episode. */
  readonly reward: number | null;
  /** QA flags raised at steps after K. */
  readonly flags: Pick<Flag, 'rule' | 'step' | 'severity' | 'message'>[];
  /** Steps the candidate ran (1 + run-on). */
  readonly steps_run: number;
  /** `paused` while it can continue, else how it ended. */
  readonly status: string;
}

/** Options of {@link tryCandidates}. */
export interface TryCandidatesOptions extends EpisodeEnv {
  /** The branch (or episode) to fork from, and the step K the candidates follow. */
  readonly id: string;
  readonly at: number;
  readonly sources: readonly CandidateSource[];
  /** Steps each candidate runs on after its own (0..), with the branch's agent. */
  readonly runOn?: number;
}

/** Candidates tried side by side; pick one to continue it, or discard them all. */
export interface CandidateSet {
  readonly group: string;
  readonly episode: string;
  readonly parent: string;
  readonly at: number;
  readonly candidates: readonly CandidateOutcome[];
  /** Continues candidate `index`: the others are closed as rejected alternatives; the caller drives and disposes the returned runner. */
  pick(index: number): Promise<EpisodeRunner>;
  /** Closes every candidate (none continued) and releases its sandbox. */
  discard(): Promise<void>;
}

/**
 * Tries candidate next actions at step K of a branch, each in its own throwaway fork
 * from snapshot K, in parallel: every fork restores snapshot K in a sandbox of the
 * caller's provider (a warm pool makes that a hand-over), runs the candidate as step
 * K+1 (and up to `runOn` more steps with the branch's agent), and stays paused until
 * a pick continues one of them and closes the others as rejected alternatives.
 */
export async function tryCandidates(options: TryCandidatesOptions): Promise<CandidateSet> {
  const store = options.store;
  if (options.sources.length === 0)
    throw new HarnessError('invalid_input', 'no candidates: give --n N, --from FILE, or type one');
  const info = store.resolve(options.id);
  const group = newId('cg-');
  const settled = await Promise.allSettled(
    options.sources.map((source, index) => tryOne(options, store, info.branch, group, source, index)),
  );
  const runners = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.runner] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(runners.map((r) => closeCandidate(r, CANDIDATE_NOT_PICKED)));
    throw failed.reason;
  }
  const tried = settled.map((s) => (s as PromiseFulfilledResult<Tried>).value);
  let open = true;
  const assertOpen = () => {
    if (!open) throw new HarnessError('conflict', `candidates ${group} were already picked or discarded`);
    open = false;
  };
  return {
    group,
    episode: info.episode,
    parent: info.branch,
    at: options.at,
    candidates: tried.map((t) => t.outcome),
    async pick(index) {
      const chosen = tried[index];
      if (!chosen)
        throw new HarnessError('invalid_input', `no candidate ${index}: candidates 0..${tried.length - 1}`);
      assertOpen();
      const others = tried.filter((t) => t !== chosen);
      await Promise.all(others.map((t) => closeCandidate(t.runner, CANDIDATE_REJECTED)));
      recordChoice(store, {
        group,
        episode: info.episode,
        parent: info.branch,
        step: options.at,
        chosen: chosen.outcome.branch,
        rejected: others.map((t) => t.outcome.branch),
        t: Date.now(),
      });
      return chosen.runner;
    },
    async discard() {
      assertOpen();
      await Promise.all(tried.map((t) => closeCandidate(t.runner, CANDIDATE_NOT_PICKED)));
    },
  };
}

interface Tried {
  readonly runner: EpisodeRunner;
  readonly outcome: CandidateOutcome;
}

async function tryOne(
  options: TryCandidatesOptions,
  store: EpisodeEnv['store'],
  parent: string,
  group: string,
  source: CandidateSource,
  index: number,
): Promise<Tried> {
  const seed = source.kind === 'model' ? (source.seed ?? null) : null;
  const origin = source.kind === 'model' ? 'model' : source.origin;
  // The fork continues at the branch's recorded settings; only step K+1 is asked with the candidate's seed.
  const runner = await forkEpisode({
    ...options,
    store,
    id: parent,
    at: options.at,
    headerExtra: { candidate: { group, of: parent, step: options.at, index, origin, seed } },
  });
  try {
    if (source.kind === 'given') runner.useAgent(candidateAgent(source.message, runner.currentAgent()));
    else if (seed !== null)
      runner.useAgent(seededCandidateAgent(seededAgent(options, runner, seed), runner.currentAgent()));
    await runner.step();
    for (let m = 0; m < (options.runOn ?? 0) && !runner.ended(); m++) await runner.step();
    return { runner, outcome: outcomeOf(store, runner, options.at, index, origin, seed) };
  } catch (e) {
    await closeCandidate(runner, CANDIDATE_NOT_PICKED);
    throw e;
  }
}

/** The fork's own agent, as its header records it, asked with `seed` instead of its recorded one. */
function seededAgent(options: TryCandidatesOptions, runner: EpisodeRunner, seed: number): Agent {
  const recorded = options.store.readTrace(options.store.resolve(runner.branch)).header.agent;
  const spec = runner.currentAgent().spec;
  return options.parts.agent(spec, {
    ...continuationOptions(spec, recorded, { ...options.agentOptions, seed }),
    skip: 0,
  });
}

function outcomeOf(
  store: EpisodeEnv['store'],
  runner: EpisodeRunner,
  at: number,
  index: number,
  origin: CandidateOutcome['origin'],
  seed: number | null,
): CandidateOutcome {
  const events = runner.history();
  const k = at + 1;
  const own = events.filter((e) => e.step > at || (e.step === at && e.type === 'end'));
  const at1 = own.filter((e) => e.step === k);
  const decided = [...at1].reverse().find((e) => e.type === 'action' || e.type === 'parse_error');
  const action: CandidateAction =
    decided?.type === 'action'
      ? { calls: decided.calls.map((c) => ({ name: c.name, arguments: c.arguments })), final: decided.final }
      : {
          calls: [],
          final: null,
          parse_error: decided?.type === 'parse_error' ? decided.message : 'no decision',
        };
  const changed = new Map<string, ChangedPath | null>();
  let treeHash: string | null = null;
  for (const e of own) {
    if (e.type !== 'snapshot') continue;
    treeHash = e.tree_hash;
    for (const c of e.changed) changed.set(c.path, mergeChange(changed.get(c.path), c));
  }
  const rewards = stepRewards(at1);
  const header = store.readTrace(store.resolve(runner.branch)).header;
  const end = runner.ended();
  const { flags } = checkEpisode({ events: [header, ...events], torn: false, open: end === null });
  return {
    index,
    origin,
    seed,
    branch: runner.branch,
    action,
    result: at1.flatMap((e) => (e.type === 'tool_result' ? [e.result] : [])),
    tree_hash: treeHash,
    files_changed: [...changed.values()]
      .filter((c): c is ChangedPath => c !== null)
      .sort((x, y) => (x.path < y.path ? -1 : 1)),
    reward: rewards.final ?? rewards.step,
    // `structure` judges one trace file's numbering; a lineage joins two files, and the fork's own file is checked by `stepbox check`.
    flags: flags
      .filter((f) => f.step > at && f.rule !== 'structure')
      .map((f) => ({ rule: f.rule, step: f.step, severity: f.severity, message: f.message })),
    steps_run: runner.currentStep() - at,
    status: end ? end.status : 'paused',
  };
}

/** A path's net change over several steps (added then deleted is no change: null). */
function mergeChange(before: ChangedPath | null | undefined, next: ChangedPath): ChangedPath | null {
  if (!before) return next;
  if (before.change === 'added' && next.change === 'deleted') return null;
  if (before.change === 'added') return before;
  if (before.change === 'deleted' && next.change === 'added') return { path: next.path, change: 'modified' };
  return next;
}

async function closeCandidate(runner: EpisodeRunner, reason: string): Promise<void> {
  try {
    if (!runner.ended()) await runner.stop(reason);
  } catch (e) {
    log.warn(`closing candidate ${runner.branch}: ${e instanceof Error ? e.message : String(e)}`);
  }
  await runner
    .dispose()
    .catch((e: unknown) =>
      log.warn(`releasing candidate ${runner.branch}: ${e instanceof Error ? e.message : String(e)}`),
    );
}
