// Fakes of the engine ports for contract tests: a controller that "runs" a scripted
// echo agent in memory, a trace port over the controllers' events, an echo terminal.
import type { Breakpoint } from '../../shared/breakpoints.js';
import type { EndEvent, HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type {
  ControllerState,
  EpisodeController,
  StopReason,
} from '../../electron/engine/harness/episode-controller.js';
import type { CallerAgentOptions } from '../../electron/engine/agents/agent-spec.js';
import type { Sandbox } from '../../electron/engine/sandbox/sandbox.js';
import type { SnapshotManifest, SnapshotStore } from '../../electron/engine/sandbox/snapshot-store.js';
import type { BranchInfo } from '../../electron/engine/trace/trace-store.js';
import type { EnginePorts, TerminalHandle } from '../../electron/services/ports.js';
import { ServiceError } from '../../electron/services/service-error.js';
import { NO_STOP_POINTS, type HeldAction, type StopPoints } from '../../shared/held-action.js';

const MAX_STEPS = 3;
let ids = 0;

/** An in-memory controller: each step runs `echo step K` and snapshots; step 3 is the final answer. */
export class FakeController implements EpisodeController {
  readonly events: TraceEvent[] = [];
  private readonly eventListeners = new Set<(e: TraceEvent) => void>();
  private readonly stateListeners = new Set<(s: ControllerState, r?: StopReason) => void>();
  private current: ControllerState = 'paused';
  private bps: Breakpoint[] = [];
  private pausing = false;
  disposed = false;
  readonly humanCommands: unknown[] = [];

  constructor(
    readonly episode: string,
    readonly branch: string,
    readonly header: HeaderEvent,
    step0: number,
    readonly parent: string | null,
  ) {
    this.at = step0;
    this.append({
      type: 'snapshot',
      step: step0,
      source: 'harness',
      tree_hash: `h${step0}`,
      manifest: `m${step0}`,
      changed: [],
      bytes: 0,
    });
  }

  private at: number;
  private points: StopPoints = { ...NO_STOP_POINTS };
  setStopPoints = (p: Partial<StopPoints>): StopPoints => (this.points = { ...this.points, ...p });
  stopPoints = (): StopPoints => this.points;
  held = (): HeldAction | null => null;
  private noHeld(): never {
    throw new ServiceError('conflict', 'no step is waiting (the fake controller never holds one)');
  }
  editAnswer = (): HeldAction => this.noHeld();
  editArguments = (): HeldAction => this.noHeld();
  replaceResult = (): HeldAction => this.noHeld();
  state = () => this.current;
  currentStep = () => this.at;
  sandbox = (): Sandbox | null => (this.disposed ? null : fakeSandbox(this.branch));
  onEvent(listener: (e: TraceEvent) => void) {
    for (const e of this.events) listener(e);
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }
  onState(listener: (s: ControllerState, r?: StopReason) => void) {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }
  private append(e: Record<string, unknown>): void {
    const event = { seq: this.events.length + 1, t: Date.now(), ...e } as TraceEvent;
    this.events.push(event);
    for (const l of this.eventListeners) l(event);
  }
  private setState(s: ControllerState, r?: StopReason) {
    this.current = s;
    for (const l of this.stateListeners) l(s, r);
  }
  /** What step k's call prints (an agent inside the sandbox can print megabytes). */
  stdoutOf = (k: number): string => `step ${k}\n`;
  /** Its next step fails before the agent decides (a fork to `exec:false`: its agent would not start). */
  failNextStep = false;
  async step(): Promise<StopReason> {
    if (this.current === 'ended') return { kind: 'ended' };
    if (this.failNextStep) {
      this.failNextStep = false;
      await this.end('error', 'agent_exit');
      return { kind: 'ended', message: 'the agent program exited with an error' };
    }
    const k = this.at + 1;
    if (k >= MAX_STEPS) {
      this.append({ type: 'action', step: k, source: 'agent', calls: [], final: 'done' });
      this.append({
        type: 'snapshot',
        step: k,
        source: 'harness',
        tree_hash: `h${k}`,
        manifest: `m${k}`,
        changed: [],
        bytes: 0,
      });
      this.at = k;
      await this.end('succeeded', 'final_answer');
      return { kind: 'ended' };
    }
    const call = { id: `c${k}`, name: 'execute_shell', arguments: { command: `echo step ${k}` } };
    this.append({ type: 'action', step: k, source: 'agent', calls: [call], final: null });
    this.append({
      type: 'tool_call',
      step: k,
      source: 'agent',
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    });
    const result: ToolResult = {
      ok: true,
      exit_code: 0,
      stdout: this.stdoutOf(k),
      stderr: '',
      duration_ms: 2,
      bytes: this.stdoutOf(k).length,
    };
    this.append({
      type: 'tool_result',
      step: k,
      source: 'environment',
      call_id: call.id,
      name: call.name,
      result,
    });
    this.append({
      type: 'snapshot',
      step: k,
      source: 'harness',
      tree_hash: `h${k}`,
      manifest: `m${k}`,
      changed: [{ path: 'out.txt', change: k === 1 ? 'added' : 'modified' }],
      bytes: 7,
    });
    this.at = k;
    const reason: StopReason = { kind: 'step' };
    this.setState('paused', reason);
    return reason;
  }
  async run(): Promise<StopReason> {
    this.setState('running');
    for (;;) {
      const r = await this.step();
      if (r.kind === 'ended') return r;
      const hit = this.bps.find((b) => b.kind === 'step' && b.step === this.at + 1);
      if (hit) {
        const reason: StopReason = { kind: 'breakpoint', breakpoint: hit };
        this.setState('paused', reason);
        return reason;
      }
      if (this.pausing) {
        this.pausing = false;
        const reason: StopReason = { kind: 'paused' };
        this.setState('paused', reason);
        return reason;
      }
    }
  }
  pause() {
    this.pausing = true;
  }
  private async end(status: EndEvent['status'], end_reason: string): Promise<EndEvent> {
    this.append({ type: 'end', step: this.at, source: 'harness', status, end_reason, verifier: null });
    this.setState('ended', { kind: 'ended' });
    return this.events[this.events.length - 1] as EndEvent;
  }
  stop(endReason?: string) {
    return this.end('interrupted', endReason ?? 'stopped');
  }
  setBreakpoints(b: readonly Breakpoint[]) {
    this.bps = [...b];
  }
  breakpoints = () => this.bps;
  inject(role: 'system' | 'user', content: string) {
    this.append({ type: 'injected', step: this.at, source: 'injected', role, content });
  }
  overrideLastResult(shown: ToolResult) {
    const last = [...this.events].reverse().find((e) => e.type === 'tool_result');
    if (last?.type !== 'tool_result') throw new ServiceError('conflict', 'no tool result to override');
    this.append({
      type: 'override',
      step: this.at,
      source: 'human',
      call_id: last.call_id,
      real: last.result,
      shown,
    });
  }
  async rollbackTo(step: number) {
    this.append({ type: 'rollback', step, source: 'human', to_step: step, reason: 'user' });
    this.at = step;
    return { from: this.branch, to_step: step, dropped: { injected: [], overridden: [], typed: [] } };
  }
  /** What each fork of this live branch was asked with (the agent and its settings). */
  readonly forkedWith: { step: number; agentSpec?: string; agentOptions?: CallerAgentOptions }[] = [];
  async fork(
    step: number,
    agentSpec?: string,
    agentOptions?: CallerAgentOptions,
  ): Promise<EpisodeController> {
    this.forkedWith.push({ step, agentSpec, agentOptions });
    const fork = registry.create(this.episode, step, this.branch);
    fork.failNextStep = agentSpec === 'exec:false';
    return fork;
  }
  memory = () => ({});
  async dispose() {
    this.disposed = true;
  }
  recordHumanCommand(c: unknown) {
    this.humanCommands.push(c);
  }
}

function fakeSandbox(branch: string): Sandbox {
  return {
    id: `fake-${branch}`,
    backend: 'docker',
    config: {
      image: 'stepbox-sandbox:1',
      network: 'none',
      limits: { cpus: 1, memoryBytes: 1 << 30, pids: 256, diskBytes: 1 << 30, outputBytes: 1 << 20 },
    },
    sessionState: async () => ({ cwd: '/workspace', env: {} }),
  } as unknown as Sandbox;
}

/** Every fake controller ever created, by branch. */
class Registry {
  readonly byBranch = new Map<string, FakeController>();
  create(episode: string | null, forkStep: number, parent: string | null): FakeController {
    const n = ++ids;
    const ep = episode ?? `ep-${n}`;
    const branch = episode ? `br-${n}` : ep;
    const header = {
      seq: 0,
      t: Date.now(),
      type: 'header',
      step: 0,
      source: 'harness',
      schema: 'stepbox.trace/1',
      episode: ep,
      branch,
      parent_branch: parent,
      fork_step: parent ? forkStep : null,
      task: { name: 'hello', goal: 'say hello' },
      task_path: '/tasks/hello/task.json',
      agent: { spec: 'scripted:agent.jsonl', kind: 'scripted' },
      image: 'stepbox-sandbox:1',
      created: Date.now() + n,
    } as HeaderEvent;
    const c = new FakeController(ep, branch, header, forkStep, parent);
    this.byBranch.set(branch, c);
    return c;
  }
  info(c: FakeController): BranchInfo {
    return {
      episode: c.episode,
      branch: c.branch,
      parentBranch: c.parent,
      forkStep: c.parent ? c.header.fork_step : null,
      tracePath: `/mem/${c.branch}`,
    };
  }
}
const registry = new Registry();

const emptyStore: SnapshotStore = {
  hasBlob: async () => false,
  putBlob: async () => undefined,
  getBlob: async () => new TextEncoder().encode('x'),
  putManifest: async () => 'm',
  listBlobs: async () => [],
  removeBlob: async () => undefined,
  listManifests: async () => [],
  getManifest: async (id: string): Promise<SnapshotManifest> => ({
    treeHash: `t-${id}`,
    entries: [{ path: 'out.txt', type: 'file', mode: 0o644, size: id.length, hash: `blob-${id}` }],
  }),
};

/** Fake engine ports; `terminals` records the echo terminals opened. */
export function fakePorts() {
  const terminals: { container: string; written: string[] }[] = [];
  const ports: EnginePorts = {
    harness: {
      async start({ taskPath, breakpoints }) {
        if (taskPath.includes('missing')) throw new ServiceError('invalid_task', `cannot read ${taskPath}`);
        const c = registry.create(null, 0, null);
        c.setBreakpoints(breakpoints);
        return c;
      },
      async reopen(id, step) {
        const parent = registry.byBranch.get(id);
        if (!parent) throw new ServiceError('not_found', `no episode ${id}`);
        return registry.create(parent.episode, step, parent.branch);
      },
      async fork(id, step) {
        const parent = registry.byBranch.get(id);
        if (!parent) throw new ServiceError('not_found', `no episode ${id}`);
        return registry.create(parent.episode, step, parent.branch);
      },
      replayVerify: async () => ({
        identical: true,
        steps_replayed: 2,
        first_divergence: null,
        workspace_diverged_at: null,
      }),
      whatIf: async (_id, _step, call) => ({
        result: {
          ok: true,
          exit_code: 0,
          stdout: `what-if ${String(call.arguments.command)}\n`,
          duration_ms: 1,
          bytes: 10,
        },
        treeHashAfter: 'what-if-hash',
      }),
    },
    traces: {
      listBranches: async () => [],
      unreadable: () => [],
      search: async (q) => [{ episode: 'ep', branch: 'ep', step: 1, snippet: `found ${q}` }],
      resolve(id) {
        const c = registry.byBranch.get(id);
        if (!c) throw new ServiceError('not_found', `no episode or branch matches "${id}"`);
        return registry.info(c);
      },
      branchesOf: (episode) =>
        [...registry.byBranch.values()].filter((c) => c.episode === episode).map((c) => registry.info(c)),
      read(b) {
        const c = registry.byBranch.get(b.branch);
        if (!c) throw new ServiceError('not_found', b.branch);
        const end = c.events.find((e) => e.type === 'end') ?? null;
        return {
          header: c.header,
          events: [c.header, ...c.events],
          torn: false,
          warnings: [],
          end: end as EndEvent | null,
        };
      },
      version: (b) => String(registry.byBranch.get(b.branch)?.events.length ?? -1),
      snapshots: () => emptyStore,
    },
    docker: {
      status: async () => ({ ok: true, message: 'Docker (fake)', fix: null }),
      async openTerminal(container) {
        const t = { container, written: [] as string[] };
        terminals.push(t);
        const data = new Set<(d: string) => void>();
        const commands = new Set<(c: { command: string; cwd: string; exit_code: number }) => void>();
        const exits = new Set<(c: number | null) => void>();
        const handle: TerminalHandle = {
          write(d) {
            t.written.push(d);
            for (const cb of data) cb(d);
            if (d.endsWith('\r'))
              for (const cb of commands) cb({ command: d.trim(), cwd: '/workspace', exit_code: 0 });
          },
          resize: async () => undefined,
          onData: (cb) => (data.add(cb), () => data.delete(cb)),
          onCommand: (cb) => (commands.add(cb), () => commands.delete(cb)),
          onExit: (cb) => (exits.add(cb), () => exits.delete(cb)),
          close: async () => {
            for (const cb of exits) cb(0);
          },
        };
        return handle;
      },
      async openStats() {
        const samples = new Set<
          (s: {
            cpuPercent: number;
            memoryBytes: number;
            memoryLimit: number;
            pids: number;
            t: number;
          }) => void
        >();
        const ends = new Set<(r: string) => void>();
        const timer = setInterval(() => {
          for (const cb of samples)
            // The cgroup's limit, larger than the task's: it makes room for the tmpfs mounts.
            cb({ cpuPercent: 1.5, memoryBytes: 1024, memoryLimit: 2816 << 20, pids: 2, t: Date.now() });
        }, 20);
        return {
          onSample: (cb) => (samples.add(cb), () => samples.delete(cb)),
          onEnd: (cb) => (ends.add(cb), () => ends.delete(cb)),
          close: () => {
            clearInterval(timer);
            for (const cb of ends) cb('closed');
          },
        };
      },
    },
    catalog: {
      tasks: async () => [
        {
          id: 'hello',
          name: 'hello',
          goal: 'say hello',
          path: '/tasks/hello/task.json',
          agent: 'scripted:a.jsonl',
        },
      ],
      cases: async () => [
        {
          id: 'loop',
          title: 'A loop',
          summary: 's',
          task_path: '/cases/loop/task.json',
          agent: 'scripted:b.jsonl',
        },
      ],
      caseVariant: async (id, fixed) => {
        if (id !== 'loop') throw new ServiceError('not_found', `no case ${id}`);
        return {
          id,
          title: 'A loop',
          summary: 's',
          task_path: fixed ? '/cases/loop/fixed/task.json' : '/cases/loop/task.json',
          agent: fixed ? 'scripted:fixed/b.jsonl' : 'scripted:b.jsonl',
        };
      },
      openCase: async (id) => {
        if (id !== 'loop') throw new ServiceError('not_found', `no case ${id}`);
        return {
          case: {
            id,
            title: 'A loop',
            summary: 's',
            task_path: '/cases/loop/task.json',
            agent: 'scripted:b.jsonl',
          },
          readme: '# A loop\n',
          task: {},
        };
      },
    },
    doctor: {
      run: async () => ({ ok: true, checks: [{ name: 'docker', ok: true, message: 'fake', fix: null }] }),
    },
  };
  return { ports, terminals, registry };
}
