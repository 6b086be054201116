import type { BatchSlotView, BatchView, FlagSummary } from '../../shared/contract/index.js';
import type { BatchFile, BatchSlot } from '../engine/batch/batch-file.js';
import { logger } from '../engine/log.js';
import type { EventBus } from './event-bus.js';
import type { BatchPort } from './ports.js';
import { ServiceError } from './service-error.js';

const log = logger('batches');

interface RunningBatch {
  readonly dir: string;
  readonly batch: BatchFile;
  readonly abort: AbortController;
  readonly started: number;
  state: BatchView['state'];
  error: string | null;
  done?: Promise<void>;
}

/** The flags a finished episode raised (warning or worse), by rule id. */
export type EpisodeFlags = (episode: string) => Promise<readonly FlagSummary[]>;

/**
 * Batches started from the window: runs them on the engine's batch port, keeps the
 * running ones' `batch.json` objects (updated in place by the runner), and emits a
 * `batch.progress` view whenever a slot starts or ends. Finished batches are read back
 * from their folders.
 */
export class BatchService {
  private readonly running = new Map<string, RunningBatch>();
  /** Finished episodes' flag rules; an ended episode's trace no longer changes. */
  private readonly flags = new Map<string, string[]>();

  constructor(
    private readonly port: BatchPort | undefined,
    private readonly bus: EventBus,
    private readonly flagsOf: EpisodeFlags,
  ) {}

  /** Creates the batch folder and starts it in the background. */
  start(tasks: readonly string[], agent: string, episodes: number, concurrency: number) {
    const port = this.requirePort();
    const { dir, batch } = port.create({ tasks, agent, episodes, concurrency });
    this.launch(port, dir, batch);
    return { batch: batch.id, dir };
  }

  /**
   * Runs a stopped batch's unfinished slots again in the background (the runner keeps a
   * cut-off episode under the slot's `superseded`, as `stepbox batch --resume` does).
   */
  async resume(id: string): Promise<BatchView> {
    const port = this.requirePort();
    const current = this.running.get(id);
    if (current?.state === 'running')
      throw new ServiceError('conflict', `batch "${id}" is running; cancel it first or wait for it to end`);
    // A cancelled run here must finish writing batch.json before the runner reconciles its slots.
    await current?.done;
    const found = port.list().find((b) => b.batch.id === id);
    if (!found) throw new ServiceError('not_found', `no batch "${id}" (batch.list shows them)`);
    if (found.batch.slots.every((s) => s.status !== null && s.status !== 'interrupted'))
      throw new ServiceError('conflict', `batch "${id}" has no unfinished slot to resume`);
    return this.emit(this.launch(port, found.dir, found.batch));
  }

  private launch(port: BatchPort, dir: string, batch: BatchFile): RunningBatch {
    const entry: RunningBatch = {
      dir,
      batch,
      abort: new AbortController(),
      started: performance.now(),
      state: 'running',
      error: null,
    };
    this.running.set(batch.id, entry);
    const seen = new Set<string>();
    const onProgress = () => {
      // A slot got its episode or ended: the library lists it.
      for (const s of batch.slots)
        if (s.episode && !seen.has(`${s.episode}:${s.status}`)) {
          seen.add(`${s.episode}:${s.status}`);
          this.bus.emit('library.changed', { episode: s.episode });
        }
      void this.emit(entry);
    };
    entry.done = port
      .run(dir, batch, onProgress, entry.abort.signal)
      .then(
        () => {
          entry.state = entry.abort.signal.aborted ? 'cancelled' : 'done';
        },
        (e: unknown) => {
          entry.state = 'failed';
          entry.error = e instanceof Error ? e.message : String(e);
          log.warn(`batch ${batch.id} failed: ${entry.error}`);
        },
      )
      .finally(() => void this.emit(entry));
    void this.emit(entry);
    return entry;
  }

  /** Running batches and the store's batch folders, newest first. */
  async list(): Promise<BatchView[]> {
    const entries: { batch: BatchFile; dir: string; running: RunningBatch | null }[] = [
      ...this.running.values(),
    ].map((r) => ({ batch: r.batch, dir: r.dir, running: r }));
    for (const { dir, batch } of this.port?.list() ?? [])
      if (!this.running.has(batch.id)) entries.push({ batch, dir, running: null });
    const views = await Promise.all(entries.map((e) => this.refreshed(e.batch, e.dir, e.running)));
    return views.sort((a, b) => b.created - a.created);
  }

  /** One batch by id. */
  async get(id: string): Promise<BatchView> {
    const running = this.running.get(id);
    if (running) return this.refreshed(running.batch, running.dir, running);
    const found = this.port?.list().find((b) => b.batch.id === id);
    if (!found) throw new ServiceError('not_found', `no batch "${id}" (batch.list shows them)`);
    return this.refreshed(found.batch, found.dir, null);
  }

  /** Stops a running batch; its unfinished slots stay for `stepbox batch --resume DIR`. */
  async cancel(id: string): Promise<BatchView> {
    const running = this.running.get(id);
    if (!running) throw new ServiceError('not_found', `batch "${id}" is not running here`);
    if (running.state === 'running') {
      running.abort.abort();
      running.state = 'cancelled';
    }
    return this.emit(running);
  }

  /** Cancels every running batch and waits for its episodes to stop (server close, app quit). */
  async dispose(): Promise<void> {
    for (const r of this.running.values()) if (r.state === 'running') r.abort.abort();
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private async refreshed(batch: BatchFile, dir: string, running: RunningBatch | null): Promise<BatchView> {
    await this.loadFlags(this.view(batch, dir, running).slots);
    return this.view(batch, dir, running);
  }

  private async emit(entry: RunningBatch): Promise<BatchView> {
    this.bus.emit('batch.progress', this.view(entry.batch, entry.dir, entry));
    const view = await this.refreshed(entry.batch, entry.dir, entry);
    this.bus.emit('batch.progress', view);
    return view;
  }

  /** Reads the flags of finished episodes not seen before. */
  private async loadFlags(slots: readonly BatchSlotView[]): Promise<void> {
    await Promise.all(
      slots
        .filter((s) => s.episode && !['pending', 'running'].includes(s.status) && !this.flags.has(s.episode))
        .map(async (s) => {
          const episode = s.episode!;
          try {
            const flags = await this.flagsOf(episode);
            this.flags.set(
              episode,
              flags.filter((f) => f.severity !== 'info').map((f) => f.rule),
            );
          } catch (e) {
            log.debug(`flags of ${episode}: ${e instanceof Error ? e.message : String(e)}`);
          }
        }),
    );
  }

  private view(batch: BatchFile, dir: string, running: RunningBatch | null): BatchView {
    const slots = batch.slots.map((s) => this.slotView(s, running?.state === 'running'));
    const finished = slots.filter((s) => s.status !== 'pending' && s.status !== 'running');
    const succeeded = finished.filter((s) => s.status === 'succeeded').length;
    const flags: Record<string, number> = {};
    for (const s of finished) for (const rule of s.flags) flags[rule] = (flags[rule] ?? 0) + 1;
    const state = running?.state ?? (finished.length === slots.length ? 'done' : 'stopped');
    const elapsed = running ? performance.now() - running.started : 0;
    const left = slots.length - finished.length;
    return {
      batch: batch.id,
      dir,
      created: batch.created,
      agent: batch.agent,
      episodes: batch.episodes,
      concurrency: batch.concurrency,
      state,
      error: running?.error ?? null,
      done: finished.length,
      total: slots.length,
      succeeded,
      running: slots.filter((s) => s.status === 'running').length,
      eta_ms: state === 'running' && finished.length > 0 ? (elapsed / finished.length) * left : null,
      success_rate: finished.length ? succeeded / finished.length : null,
      flags,
      slots,
    };
  }

  /** A slot; an unfinished one is `running` only while its batch runs (else it waits for --resume). */
  private slotView(s: BatchSlot, batchRunning: boolean): BatchSlotView {
    const active = batchRunning && s.status === null && (s.starting !== null || s.episode !== null);
    return {
      task: s.task,
      task_name: s.task_name,
      index: s.index,
      episode: s.episode,
      status: s.status ?? (active ? 'running' : 'pending'),
      end_reason: s.end_reason,
      steps: s.steps,
      duration_ms: s.duration_ms,
      superseded: [...s.superseded],
      flags: (s.episode && this.flags.get(s.episode)) || [],
    };
  }

  private requirePort(): BatchPort {
    if (!this.port)
      throw new ServiceError(
        'internal',
        'batches are not available: the engine did not load. Fix: npm run build',
      );
    return this.port;
  }
}
