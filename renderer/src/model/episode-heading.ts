import type { EpisodeEntry } from '../../../shared/contract/models';
import { discountedReturnText } from '../../../shared/format-outcome';
import { pathsInText } from '../../../shared/start-paths';

/** The agent of an episode's main branch, short: a script by its file's name (`scripted:agent.jsonl`). */
function agentOf(e: EpisodeEntry): string {
  const agent = e.branches[0]?.agent ?? '';
  return pathsInText(agent, (path) => path.slice(path.lastIndexOf('/') + 1));
}

const two = (n: number) => String(n).padStart(2, '0');

/** `started 16:08`, or with seconds (`started 16:08:31`), in the window's local time. */
function startedAt(created: number, seconds: boolean): string {
  const d = new Date(created);
  return `started ${two(d.getHours())}:${two(d.getMinutes())}${seconds ? `:${two(d.getSeconds())}` : ''}`;
}

/**
 * What tells each episode of the library from the others of its task, after the task's name in
 * its heading (null for a task with one episode): several groups read "hello-python · main branch:
 * return 1.61" with nothing but their ids apart. The one rule: the first of its agent, its start time
 * to the minute, to the second, or its place in the task's runs (`run 2 of 3`, oldest first)
 * that differs for every episode of the task.
 */
export function episodesApart(entries: readonly EpisodeEntry[]): ReadonlyMap<string, string> {
  const byTask = new Map<string, EpisodeEntry[]>();
  for (const e of entries) byTask.set(e.task, [...(byTask.get(e.task) ?? []), e]);
  const out = new Map<string, string>();
  for (const group of byTask.values()) {
    if (group.length < 2) continue;
    const oldest = [...group].sort((a, b) => a.created - b.created);
    const ways: ((e: EpisodeEntry) => string)[] = [
      agentOf,
      (e) => startedAt(e.created, false),
      (e) => startedAt(e.created, true),
      (e) => `run ${oldest.indexOf(e) + 1} of ${group.length}`,
    ];
    const apart = ways.find((way) => new Set(group.map(way)).size === group.length) ?? ways[ways.length - 1];
    for (const e of group) out.set(e.episode, apart(e));
  }
  return out;
}

/**
 * Whose return an episode's heading shows, as a person reads it: `main branch: return 1.61`. It
 * read "main return 1.61" above the tree's own "return 1.61", as if "main return" were a kind of
 * return.
 */
export function mainReturnText(main: Pick<EpisodeEntry['branches'][number], 'return' | 'gamma'>): string {
  return `main branch: ${discountedReturnText(main.return, main.gamma)}`;
}
