import { Breakpoint } from '../../shared/breakpoints.js';
import { LiveQaRule } from '../../shared/qa/live.js';
import { UsageError } from './command.js';

/** The forms `--break` accepts. */
export const BREAK_FORMS = `step=N, tool=NAME, tool_error, nonzero_exit, timeout, fallback, null_value, repeat=N, slow_step=MS, qa, qa=RULE (a live QA rule: ${LiveQaRule.options.join(', ')})`;

/** Parses `--break KIND[=VALUE]` flags into breakpoints; a bad one is a usage error listing the forms. */
export function parseBreakFlags(flags: readonly string[]): Breakpoint[] {
  return flags.map((flag) => {
    const [kind, value] = flag.split('=', 2);
    const field: Record<string, string> = {
      step: 'step',
      tool: 'name',
      repeat: 'count',
      slow_step: 'ms',
      qa: 'rule',
    };
    const raw: Record<string, unknown> = { kind };
    if (field[kind] !== undefined && !(kind === 'qa' && value === undefined))
      raw[field[kind]] = kind === 'tool' || kind === 'qa' ? value : Number(value);
    const parsed = Breakpoint.safeParse(raw);
    if (!parsed.success) throw new UsageError(`--break ${flag}: expected one of ${BREAK_FORMS}`);
    return parsed.data;
  });
}
