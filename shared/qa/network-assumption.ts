import type { ToolResult } from '../tool-result.js';
import { flag, type Flag } from './flag.js';
import { endOf, type QaInput } from './qa-input.js';
import { isGiveUp } from './unverified-success.js';

/** What resolvers, sockets, curl, git, pip and urllib say when there is no network. */
const NETWORK_ERROR =
  /temporary failure in name resolution|could not resolve host|name or service not known|network is unreachable|no route to host|failed to establish a new connection|name resolution|getaddrinfo|nodename nor servname|urlopen error/i;

/** What later work says when the thing it needed was never installed or fetched. */
const MISSING_DEPENDENCY =
  /no module named|modulenotfounderror|command not found|no such file or directory|cannot access|not a git repository/i;

/** A final answer that owns up to the missing network rather than claiming it worked. */
const ACKNOWLEDGES =
  /\b(network|offline|internet|no connection|unreachable|could not (download|fetch|install|reach))\b/i;

/** The text of a result a rule can search: output streams and the error message. */
function resultText(r: ToolResult): string {
  return `${r.stdout ?? ''}\n${r.stderr ?? ''}\n${r.error?.message ?? ''}`;
}

/** True when a result says the network is not there (a resolver or socket error, or `network_unavailable`). */
export function isNetworkError(r: ToolResult): boolean {
  return r.error?.code === 'network_unavailable' || NETWORK_ERROR.test(resultText(r));
}

/**
 * `network_assumption`: a result says the network is not there (name resolution, "network
 * is unreachable", `network_unavailable`), and then either a later result shows work that
 * depended on it failing (`No module named`, `command not found`, a missing file: a
 * warning), or the final answer claims success without owning up to it (an error) — unless
 * the verifier passed, in which case the agent found another way. Each part is judged at
 * its own step, so the rule also runs live.
 */
export function checkNetworkAssumption(input: QaInput): Flag[] {
  const flags: Flag[] = [];
  let first: { step: number; call: string; text: string } | null = null;
  let dependentFlagged = false;
  for (const e of input.events) {
    if (e.type === 'tool_result') {
      if (isNetworkError(e.result)) {
        first ??= { step: e.step, call: e.name, text: resultText(e.result).trim().slice(0, 300) };
        continue;
      }
      if (
        first &&
        !dependentFlagged &&
        e.step > first.step &&
        MISSING_DEPENDENCY.test(resultText(e.result))
      ) {
        dependentFlagged = true;
        flags.push(
          flag(
            'network_assumption',
            e.step,
            'warning',
            `step ${e.step} depends on what the network failure at step ${first.step} never fetched: ${resultText(e.result).trim().slice(0, 120)}`,
            { network_step: first.step, network_error: first.text, step: e.step },
          ),
        );
      }
    } else if (e.type === 'action' && e.final !== null && first) {
      const end = endOf(input.events);
      if (end?.verifier?.success) continue;
      if (isGiveUp(e.final) || ACKNOWLEDGES.test(e.final)) continue;
      flags.push(
        flag(
          'network_assumption',
          e.step,
          'error',
          `the final answer claims success, but the network was unreachable at step ${first.step} (${first.call})`,
          { network_step: first.step, network_error: first.text, final: e.final.slice(0, 500) },
        ),
      );
    }
  }
  return flags;
}
