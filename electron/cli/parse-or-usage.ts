import { parseArgs, type ParseArgsConfig } from 'node:util';
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

/** What `parseArgs` gives for `options` with positionals allowed. */
type OneArgResult<O extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/**
 * Parses a command's flags and its one positional argument, the set-up most commands share:
 * unknown or malformed flags, and anything but one argument, are usage errors (exit 2).
 * `what` names the argument and where to find one: `EPISODE (stepbox list shows them)`.
 */
export function parseOneArg<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  what: string,
): { values: OneArgResult<O>['values']; arg: string } {
  const { values, positionals } = parseOrUsage(() =>
    parseArgs({ args: argv, options, allowPositionals: true, strict: true }),
  );
  if (positionals.length !== 1) throw new UsageError(`expected one ${what}`);
  return { values, arg: positionals[0] };
}
