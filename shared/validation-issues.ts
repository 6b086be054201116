// The one wording of a validation error: every zod failure the engine, the services and the
// CLI report reads `field.path: what is wrong; other.field: …`.
import type { z } from 'zod';

/** One zod issue in words: `path.to.field: message`, or `top: message` for the whole value. */
export function issueLine(issue: z.core.$ZodIssue, top = '(top level)'): string {
  return `${issue.path.length ? issue.path.join('.') : top}: ${issue.message}`;
}

/**
 * Zod issues in words, joined by `; ` (the first `most` of them when given). `top` names the
 * whole value when an issue is about it rather than a field: `(request)`, `(event)`, ….
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  top = '(top level)',
  most = Infinity,
): string {
  return issues
    .slice(0, most)
    .map((i) => issueLine(i, top))
    .join('; ');
}
