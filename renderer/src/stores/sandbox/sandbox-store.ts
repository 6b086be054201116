import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type {
  DockerStatus,
  DoctorCheck,
  SandboxDetails,
  StatsSample,
  WarmSandboxes,
} from '../../../../shared/contract/models';
import { errorText } from '../result';

/** The branch's sandbox, its live stats, and Docker's health. */
export interface SandboxState {
  readonly branch: string | null;
  readonly docker: DockerStatus | null;
  readonly sandbox: SandboxDetails | null;
  readonly load: 'idle' | 'loading' | 'ready' | 'error';
  readonly error: string | null;
  readonly subscription: string | null;
  readonly stats: StatsSample | null;
  /** Recent samples for the sparklines. */
  readonly history: readonly StatsSample[];
  readonly streamEnded: string | null;
  readonly checks: readonly DoctorCheck[] | null;
  /** The warm pool's idle sandboxes (no episode in them), as last asked; null before. */
  readonly warm: WarmSandboxes | null;
}

/** What the sandbox panel does. */
export interface SandboxActions {
  /** Docker's status and, when it is down, the doctor's checks (what is wrong, how to fix it). */
  checkDocker(): Promise<void>;
  /** Asks again how many idle sandboxes the warm pool holds (the library changed: a start, a stop). */
  countWarm(): Promise<void>;
  /** Shows a branch's sandbox and starts its one long-lived stats stream (null: none). */
  watch(branch: string | null): Promise<void>;
  dispose(): void;
}

/**
 * What the Running list says of the warm pool's idle sandboxes, or null when it holds none:
 * containers `docker ps` shows that run no episode (a start is a hand-over to one of them).
 */
export function selectWarmNote(s: Pick<SandboxState, 'warm'>): string | null {
  const n = s.warm ? s.warm.ready + s.warm.starting : 0;
  if (n === 0) return null;
  const what = n === 1 ? '1 warm sandbox waits' : `${n} warm sandboxes wait`;
  return `${what} idle for the next start (no episode in ${n === 1 ? 'it' : 'them'}; stopped when stepbox closes)`;
}

/** The sandbox slice. */
export type SandboxStore = StoreApi<SandboxState & SandboxActions>;

const HISTORY = 60;

/** Creates the sandbox slice; stats arrive on one stream per sandbox, never by polling. */
export function createSandboxStore(client: StepboxClient): SandboxStore {
  const store = createStore<SandboxState & SandboxActions>()((set, get) => ({
    branch: null,
    docker: null,
    sandbox: null,
    load: 'idle',
    error: null,
    subscription: null,
    stats: null,
    history: [],
    streamEnded: null,
    checks: null,
    warm: null,
    async checkDocker() {
      const info = await client.sandbox.info({});
      if (!info.ok) {
        set({ error: errorText(info) });
        return;
      }
      set({ docker: info.value.docker, warm: info.value.warm ?? null });
      if (info.value.docker.ok) return;
      const doctor = await client.system.doctor({});
      if (doctor.ok) set({ checks: doctor.value.checks });
    },
    async countWarm() {
      const info = await client.sandbox.info({});
      if (info.ok) set({ warm: info.value.warm ?? null });
    },
    async watch(branch) {
      const old = get().subscription;
      set({
        branch,
        sandbox: null,
        stats: null,
        history: [],
        error: null,
        subscription: null,
        streamEnded: null,
        load: branch ? 'loading' : 'idle',
      });
      if (old) void client.stats.unsubscribe({ subscription: old });
      if (!branch) return;
      const res = await client.sandbox.info({ id: branch });
      if (get().branch !== branch) return;
      if (!res.ok) {
        set({ load: 'error', error: errorText(res) });
        return;
      }
      set({
        docker: res.value.docker,
        sandbox: res.value.sandbox,
        warm: res.value.warm ?? get().warm,
        load: 'ready',
      });
      if (!res.value.sandbox || res.value.sandbox.state !== 'running') return;
      const sub = await client.stats.subscribe({ id: branch });
      if (get().branch !== branch) {
        if (sub.ok) void client.stats.unsubscribe({ subscription: sub.value.subscription });
        return;
      }
      if (sub.ok) set({ subscription: sub.value.subscription });
      else set({ error: errorText(sub) });
    },
    dispose() {
      offStats();
      offEnd();
    },
  }));
  const offStats = client.onSandboxStats((stats) => {
    const s = store.getState();
    if (stats.subscription !== s.subscription && stats.branch !== s.branch) return;
    store.setState({ stats, history: [...s.history.slice(-(HISTORY - 1)), stats] });
  });
  const offEnd = client.onSandboxStatsEnd(({ subscription, message }) => {
    if (subscription !== store.getState().subscription) return;
    store.setState({ streamEnded: message, subscription: null });
  });
  return store;
}

/** Memory use as a fraction of the limit, or null. */
export function selectMemoryFraction(s: SandboxState): number | null {
  return s.stats && s.stats.memory_limit_bytes > 0 ? s.stats.memory_bytes / s.stats.memory_limit_bytes : null;
}

/** True when Docker is known to be unreachable. */
export function selectDockerDown(s: SandboxState): boolean {
  return s.docker !== null && !s.docker.ok;
}
