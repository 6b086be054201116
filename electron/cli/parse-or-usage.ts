import { UsageError } from './command.js';

/** Runs `parseArgs` (inside `parse`) turning its unknown/malformed-option errors into usage errors (exit 2). */
export function parseOrUsage<R>(parse: () => R): R {
  try {
    return parse();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))
      throw new UsageError((e as Error).message);
    throw e;
  }
}
