import type { z } from 'zod';
import { err, ok, type Result } from '../../../shared/result.js';
import { describeArgumentIssues } from './arguments.js';

/** A validator from a built-in tool's zod schema, with `field: expected ...` messages. */
export function zodValidator(
  schema: z.ZodObject,
): (args: Record<string, unknown>) => Result<unknown, string> {
  const allowed = Object.keys(schema.shape);
  return (args) => {
    const parsed = schema.safeParse(args);
    return parsed.success ? ok(parsed.data) : err(describeArgumentIssues(parsed.error.issues, args, allowed));
  };
}
