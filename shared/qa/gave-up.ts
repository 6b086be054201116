import type { ToolResult } from '../tool-result.js';
import { execWrapperOf, exitCodeOf } from '../exec-wrapper.js';
import { flag, type Flag } from './flag.js';
import { normalizeCall } from './normalize-call.js';
import { endOf, type QaInput } from './qa-input.js';

/** What a blocked call says: no permission, a read-only file system, nothing there. */
const BLOCKED = /permission denied|read-only file system|operation not permitted|no such file or directory/i;

/** Tools that only look: a call of them is not "another way". */
const LOOK_ONLY = new Set(['read_file', 'list_dir', 'memory_read']);

/** True when a result says the call was blocked by permissions or a missing path. */
export function isBlocked(r: ToolResult): boolean {
  if (r.error) return r.error.code === 'permission_denied' || r.error.code === 'not_found';
  return (exitCodeOf(r) ?? 0) !== 0 && BLOCKED.test(`${r.stderr ?? ''}\n${r.stdout ?? ''}`);
}

/**
 * `gave_up`: the agent's final answer comes after a permission or not-found error with no
 * other way tried since: no later call that differs from the blocked one, does more than
 * look (`read_file`, `list_dir`), and succeeded. A verifier that passed says the way around
 * was found after all. Judged at the final step, so the rule also runs live.
 */
export function checkGaveUp(input: QaInput): Flag[] {
  let blocked: { step: number; name: string; key: string; result: ToolResult } | null = null;
  const calls = new Map<string, { name: string; key: string }>();
  for (const e of input.events) {
    if (e.type === 'tool_call')
      calls.set(e.call_id, { name: e.name, key: normalizeCall(e.name, e.arguments) });
    else if (e.type === 'tool_result') {
      const call = calls.get(e.call_id) ?? { name: e.name, key: e.name };
      if (isBlocked(e.result)) blocked = { step: e.step, ...call, result: e.result };
      else if (
        blocked &&
        call.key !== blocked.key &&
        !LOOK_ONLY.has(call.name) &&
        e.result.ok &&
        (exitCodeOf(e.result) ?? 0) === 0
      )
        blocked = null;
    } else if (e.type === 'action' && e.final !== null && blocked) {
      if (endOf(input.events)?.verifier?.success) return [];
      // An agent's own tool sends no stderr: what the command printed is under its output's header.
      const r = blocked.result;
      const said = r.error?.message ?? (r.stderr || execWrapperOf(r)?.output || '');
      return [
        flag(
          'gave_up',
          e.step,
          'warning',
          `the agent ended at step ${e.step} right after ${blocked.name} was blocked at step ${blocked.step} (${String(said).trim().slice(0, 100)}), without trying another way`,
          {
            blocked_step: blocked.step,
            call: blocked.name,
            error: String(said).slice(0, 300),
            final: e.final.slice(0, 500),
          },
        ),
      ];
    }
  }
  return [];
}
