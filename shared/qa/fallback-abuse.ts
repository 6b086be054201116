import { countOf } from '../count-of.js';
import { flag, type Flag } from './flag.js';
import { endOf, eventsOf, type QaInput } from './qa-input.js';

/** `fallback_abuse`: fallback observations in more than `qa.max_fallback_rate` (30 %) of the tool calls. */
export function checkFallbackAbuse(input: QaInput): Flag[] {
  const results = eventsOf(input.events, 'tool_result');
  const fallbacks = results.filter((r) => r.result.fallback === true);
  if (results.length === 0 || fallbacks.length === 0) return [];
  const rate = fallbacks.length / results.length;
  const max = input.task.qa.max_fallback_rate;
  if (rate <= max) return [];
  const tools = [...new Set(fallbacks.map((f) => f.name))];
  // One count for the flag and the case's walkthrough: the calls recorded so far. While the
  // episode runs that is a prefix ("1 of 1" after step 1, "4 of 4" at its end), so it says so.
  const soFar = endOf(input.events) === null ? ' so far' : '';
  return [
    flag(
      'fallback_abuse',
      fallbacks[0].step,
      'warning',
      `${fallbacks.length} of ${countOf(results.length, 'tool call')}${soFar} (${Math.round(rate * 100)} %) returned a fallback instead of a result, more than the ${Math.round(max * 100)} % the task allows — is ${tools.join(', ')}'s timeout too strict?`,
      {
        rate,
        fallbacks: fallbacks.length,
        calls: results.length,
        tools,
        steps: fallbacks.map((f) => f.step),
      },
    ),
  ];
}
