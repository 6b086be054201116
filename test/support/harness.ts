import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTask, type Task, type TaskInput } from '../../shared/task.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import {
  startEpisode,
  type EpisodeRunner,
  type StartEpisodeOptions,
} from '../../electron/engine/harness/index.js';
import type { EpisodeParts } from '../../electron/engine/episode-parts.js';
import { openEngine, type Engine } from '../../electron/engine/open-engine.js';
import type { SandboxProvider } from '../../electron/engine/sandbox/sandbox.js';
import { coldSupply } from '../../electron/engine/sandbox/sandbox-supply.js';
import type { DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createMemoryProvider } from './memory-sandbox/provider.js';

/** The in-memory sandbox provider (fast unit tests of the loop). */
export const memoryProvider = createMemoryProvider();

/** Cold starts on the memory sandbox: what the harness factories take in unit tests. */
export const memorySupply = coldSupply(memoryProvider);

/**
 * A temporary $STEPBOX_HOME with the engine opened on it as the CLI and the services do,
 * sandboxes from `provider` (default the memory sandbox; Docker tests pass theirs and
 * close it themselves), removed by `cleanup`.
 */
export function tempHome(provider: SandboxProvider = memoryProvider): {
  home: string;
  engine: Engine;
  store: DiskEpisodeStore;
  parts: EpisodeParts;
  dir: string;
  cleanup: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-harness-'));
  const home = join(dir, 'home');
  const engine = openEngine({ home, provider: async () => provider });
  const { store, parts } = engine;
  return { home, engine, store, parts, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A task with defaults filled in; throws on an invalid one. */
export function task(input: TaskInput): Task {
  const r = parseTask(input);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** A scripted-agent file in `dir` from messages (objects become JSON lines; strings are written as is). */
export function script(dir: string, name: string, lines: readonly (object | string)[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

/** One assistant message calling one tool. */
export function call(name: string, args: Record<string, unknown>, id?: string): object {
  return {
    content: null,
    tool_calls: [
      {
        id: id ?? `c_${name}_${Math.random().toString(36).slice(2, 8)}`,
        type: 'function',
        function: { name, arguments: JSON.stringify(args) },
      },
    ],
  };
}

/** A final answer. */
export function final(text: string): object {
  return { content: text };
}

/** Events of one type. */
export function ofType<T extends TraceEvent['type']>(
  events: readonly TraceEvent[],
  type: T,
): Extract<TraceEvent, { type: T }>[] {
  return events.filter((e) => e.type === type) as Extract<TraceEvent, { type: T }>[];
}

/** A small task the memory sandbox can run: shell builtins only, verifier `cat done.txt`. */
export function memoryTask(overrides: Partial<TaskInput> = {}): Task {
  return task({
    name: 'unit-loop',
    goal: 'Write done.txt',
    tools: ['execute_shell', 'read_file', 'write_file', 'list_dir', 'memory_read', 'memory_write'],
    verifier: { command: 'cat done.txt' },
    max_steps: 10,
    ...overrides,
  });
}

let scripts = 0;

/**
 * Starts an episode on the memory sandbox in `env`'s store (unless `options` say
 * otherwise), its scripted agent written from `lines` into a new file in `env.dir`.
 */
export function startScripted(
  env: ReturnType<typeof tempHome>,
  options: Omit<StartEpisodeOptions, 'agentSpec' | 'store' | 'supply' | 'parts'> &
    Partial<Pick<StartEpisodeOptions, 'store' | 'supply' | 'parts'>>,
  lines: readonly (object | string)[],
): Promise<EpisodeRunner> {
  return startEpisode({
    store: env.store,
    parts: env.parts,
    supply: memorySupply,
    ...options,
    agentSpec: `scripted:${script(env.dir, `agent-${++scripts}.jsonl`, lines)}`,
  });
}
