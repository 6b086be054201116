import { taskToolNames, type Task } from '../task.js';
import { baseName, workspacePath } from './qa-input.js';
import { shellWords } from './shell-words.js';

/** Words of a text or command line that look like file paths (a dot or slash in them). */
export function pathLikeWords(text: string): string[] {
  const words = shellWords(text) ?? text.split(/\s+/);
  return words
    .flatMap((w) => w.split(/[\s=,:]+/))
    .map((w) => w.replace(/^[`'"([{]+|[`'")\]},.;!?]+$/g, ''))
    .filter((w) => /[./]/.test(w) && /[A-Za-z0-9_]/.test(w) && !/^https?:/.test(w))
    .map((p) => workspacePath(p));
}

/** The files the verifier command names (relative to /workspace). */
export function verifierFiles(task: Task): string[] {
  return task.verifier ? pathLikeWords(task.verifier.command).filter((p) => p !== '.') : [];
}

/** What the task names: files (goal, workspace, verifier), and the tools and memory keys its goal mentions. */
export interface TaskNames {
  readonly files: ReadonlySet<string>;
  readonly tools: ReadonlySet<string>;
  readonly memoryKeys: ReadonlySet<string>;
}

/** Collects what the task's goal, workspace and verifier name, for the goal-drift rule. */
export function taskNames(task: Task): TaskNames {
  const files = new Set<string>();
  for (const p of [
    ...pathLikeWords(task.goal),
    ...Object.keys(task.workspace.files).map((p) => workspacePath(p)),
    ...verifierFiles(task),
  ])
    if (p !== '.') files.add(p);
  const goal = task.goal.toLowerCase();
  const mentions = (name: string) =>
    new RegExp(`(^|[^a-z0-9_])${name.toLowerCase().replace(/[^a-z0-9_]/g, '\\$&')}($|[^a-z0-9_])`).test(goal);
  const tools = new Set(taskToolNames(task).filter(mentions));
  const keys = new Set([
    ...Object.keys(task.memory.initial),
    ...Object.keys(task.memory.writers).flatMap((t) => task.memory.writers[t]),
  ]);
  const memoryKeys = new Set([...keys].filter(mentions));
  return { files, tools, memoryKeys };
}

/** True when `path` is a named file, its directory, or shares its base name. */
export function touchesNamedFile(path: string, names: TaskNames): boolean {
  const p = workspacePath(path);
  for (const f of names.files) {
    if (p === f || baseName(p) === baseName(f)) return true;
    if (p === '.' || f.startsWith(p + '/')) return true;
  }
  return false;
}
