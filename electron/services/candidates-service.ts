import type {
  CandidateSetView,
  CandidateView,
  Consent,
  TypedCandidate,
} from '../../shared/contract/index.js';
import { candidateSources } from '../engine/candidates/candidate-sources.js';
import type { StagedSandboxes } from '../engine/candidates/staged-sandboxes.js';
import {
  CONTINUED_IN_CANDIDATE,
  type CandidateOutcome,
  type CandidateSet,
} from '../engine/candidates/try-candidates.js';
import { lastSnapshot, snapshotAt } from '../engine/trace/lineage.js';
import { logger } from '../engine/log.js';
import type { EpisodeManager } from './episode-manager.js';
import { readBranch } from './branch-trace.js';
import type { HarnessPort, TracePort } from './ports.js';
import { ServiceError } from './service-error.js';
import { fileChanges, manifestOf } from './workspace-files.js';

const log = logger('candidates');

/** Changed files shown with their text per candidate; the rest are listed by name. */
const MAX_FILES = 10;

/**
 * Candidates the window tried, held (their forks paused, sandboxes kept) until a person
 * picks one — it then becomes a live branch like any other — or discards them.
 */
export class CandidatesService {
  private readonly sets = new Map<string, CandidateSet>();
  /** Sandboxes being staged at a step while a person writes candidates (one staging at a time). */
  private staging: { branch: string; step: number; staged: Promise<StagedSandboxes | null> } | null = null;

  constructor(
    private readonly harness: HarnessPort,
    private readonly traces: TracePort,
    private readonly episodes: EpisodeManager,
  ) {}

  /** Tries the branch agent's `n` candidates and the typed ones after step `step` of `id`. */
  async tryAt(
    id: string,
    step: number,
    n: number,
    typed: readonly TypedCandidate[],
    runOn: number,
    consent?: Consent,
  ): Promise<CandidateSetView> {
    if (!this.harness.candidates)
      throw new ServiceError('docker_unreachable', 'candidates need the Docker engine (run stepbox doctor)');
    const info = this.traces.resolve(id);
    const kind = String(this.traces.read(info).header.agent.kind);
    let picked;
    try {
      picked = candidateSources({ agentKind: kind, n, typed });
    } catch (e) {
      throw new ServiceError('invalid_input', e instanceof Error ? e.message : String(e));
    }
    const { sources, notes } = picked;
    if (sources.length === 0)
      throw new ServiceError('invalid_input', 'no candidates: ask the agent for some, or type one');
    const live = this.episodes.find(info.branch);
    if (live && live.state() === 'running')
      throw new ServiceError('busy', 'pause the episode before trying candidates');
    const staging = this.staging?.branch === info.branch && this.staging.step === step ? this.staging : null;
    if (staging) this.staging = null;
    const staged = staging ? await staging.staged : null;
    let set: CandidateSet;
    try {
      set = await this.harness.candidates({
        id: info.branch,
        step,
        sources,
        runOn,
        consent,
        ...(staged ? { staged } : {}),
      });
    } finally {
      await staged?.close();
    }
    this.sets.set(set.group, set);
    const before = await this.manifestAtStep(info.branch, step);
    const candidates = await Promise.all(set.candidates.map((c) => this.view(c, before, set.episode)));
    return { group: set.group, episode: set.episode, parent: set.parent, step, candidates, notes };
  }

  /**
   * Starts staging `count` warm sandboxes at snapshot `step` of `id` in the background, so
   * the candidates tried there next start from a sandbox that already holds the step's
   * workspace. An earlier staging is released.
   */
  stage(id: string, step: number, count: number, consent?: Consent): void {
    if (!this.harness.stageCandidates) return;
    const branch = this.traces.resolve(id).branch;
    void this.releaseStaging();
    // Without consent to a wider recorded task staging is refused (warned) and the
    // candidates request then asks for it.
    const staged = this.harness.stageCandidates(branch, step, count, consent).catch((e: unknown) => {
      // Staging is a head start only: the candidates then start from plain warm sandboxes.
      log.warn(
        `staging sandboxes at step ${step} of ${branch}: ${e instanceof Error ? e.message : String(e)}`,
      );
      return null;
    });
    this.staging = { branch, step, staged };
  }

  /** Continues candidate `index`: it becomes a live branch; the live parent paused at K stops. */
  async pick(group: string, index: number) {
    const set = this.take(group);
    const runner = await set.pick(index);
    const parent = this.episodes.find(set.parent);
    if (parent && parent.state() !== 'running' && parent.state() !== 'ended') {
      // The episode continues on the chosen branch: the abandoned live parent closes, as after a rollback.
      await this.episodes
        .stop(set.parent, CONTINUED_IN_CANDIDATE)
        .catch((e: unknown) => log.warn(`stopping ${set.parent}: ${String(e)}`));
    }
    const state = this.episodes.adopt(runner);
    return { episode: runner.episode, branch: runner.branch, state };
  }

  /** Closes every candidate of a group. */
  async discard(group: string): Promise<void> {
    await this.take(group).discard();
  }

  private async releaseStaging(): Promise<void> {
    const staging = this.staging;
    this.staging = null;
    await (await staging?.staged)?.close();
  }

  /** Discards every held group and staged sandbox (app quit). */
  async disposeAll(): Promise<void> {
    await this.releaseStaging();
    const sets = [...this.sets.values()];
    this.sets.clear();
    await Promise.all(
      sets.map((s) => s.discard().catch((e: unknown) => log.warn(`discarding ${s.group}: ${String(e)}`))),
    );
  }

  private take(group: string): CandidateSet {
    const set = this.sets.get(group);
    if (!set)
      throw new ServiceError(
        'not_found',
        `no candidates ${group} held here (picked, discarded, or from another window)`,
      );
    this.sets.delete(group);
    return set;
  }

  private async manifestAtStep(branch: string, step: number): Promise<string | null> {
    return snapshotAt(readBranch(this.traces, branch).events, step)?.manifest ?? null;
  }

  private async view(c: CandidateOutcome, before: string | null, episode: string): Promise<CandidateView> {
    const store = this.traces.snapshots(episode);
    const after = lastSnapshot(readBranch(this.traces, c.branch).events)?.manifest ?? null;
    const [mb, ma] = await Promise.all([manifestOf(store, before), manifestOf(store, after)]);
    // A file over the snapshot cap has no content to show: the card lists it as not captured.
    const captured = c.files_changed.filter((f) => f.captured !== false);
    const files = await fileChanges(store, mb, ma, captured.slice(0, MAX_FILES));
    return { ...c, files };
  }
}
