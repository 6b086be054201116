/**
 * The words by which a final answer admits it did not finish, apart from the rules (no zod): the
 * window's Compare reads them too (model/compare-verdict.ts), in its first chunk.
 */
const GIVE_UP =
  /\b(could ?n[o']t|can ?n[o']t|can't|cannot|unable|not able|failed|fail to|gave up|give up|giving up|did ?n[o']t (manage|succeed|work)|unsuccessful|no luck|impossible|stuck)\b/i;

/** True when a final answer admits failure rather than claiming completion. */
export function isGiveUp(answer: string): boolean {
  return GIVE_UP.test(answer);
}
