import { agreeing, countOf } from './count-of.js';
import type { OtherWriters } from './trace-events.js';

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * Why the files a person's terminal command found changed may not all be theirs, in words:
 * "the agent's sh (pid 41) and sleep (pid 57) were running too". The processes' names are
 * their own (a process may name itself), so each is quoted with its pid.
 */
export function otherWritersText(others: OtherWriters): string {
  const parts: string[] = [];
  const names = others.processes.map((p) => `${p.name} (pid ${p.pid})`);
  if (others.more > 0) names.push(countOf(others.more, 'more'));
  const alive = others.processes.length + others.more;
  if (alive > 0) parts.push(`the agent's ${listed(names)} ${agreeing(alive, 'was', 'were')} running too`);
  if (others.episode) parts.push("the episode's own tool call or restore changed files meanwhile");
  if (others.unknown !== undefined) parts.push(`stepbox could not tell what else ran (${others.unknown})`);
  return parts.join('; ');
}
