import { Breakpoint } from '../../shared/breakpoints.js';
import { didYouMean } from '../../shared/did-you-mean.js';
import { LiveQaRule } from '../../shared/qa/live.js';
import { UsageError } from './command.js';

/** The forms `--break` accepts. */
export const BREAK_FORMS = `step=N, tool=NAME (before a call of NAME runs), tool_error, nonzero_exit, timeout, fallback, null_value, repeat=N, slow_step=MS, qa, qa=RULE (a live QA rule: ${LiveQaRule.options.join(', ')}), request_tool=NAME (before the answer, the request offers NAME), request_no_tool=NAME (it does not), request_match=REGEX (a message of the request matches)`;

/** The field each `KIND=VALUE` form fills, and whether its value is a number. */
const VALUE_FIELD: Readonly<Record<string, { field: string; numeric: boolean }>> = {
  step: { field: 'step', numeric: true },
  tool: { field: 'name', numeric: false },
  repeat: { field: 'count', numeric: true },
  slow_step: { field: 'ms', numeric: true },
  qa: { field: 'rule', numeric: false },
  request_tool: { field: 'name', numeric: false },
  request_no_tool: { field: 'name', numeric: false },
  request_match: { field: 'pattern', numeric: false },
};

/** Every kind `--break` knows, for did-you-mean. */
const KINDS: readonly string[] = Breakpoint.options.map((o) => o.shape.kind.value);

/** Parses `--break KIND[=VALUE]` flags into breakpoints; a bad one is a usage error listing the forms. */
export function parseBreakFlags(flags: readonly string[]): Breakpoint[] {
  return flags.map((flag) => {
    const at = flag.indexOf('=');
    // A pattern may itself hold '=': only the first one separates the kind.
    const kind = at < 0 ? flag : flag.slice(0, at);
    const value = at < 0 ? undefined : flag.slice(at + 1);
    if (!KINDS.includes(kind)) {
      const near = didYouMean(kind, KINDS);
      throw new UsageError(
        `--break ${flag}: unknown kind "${kind}"${near ? ` (did you mean ${near}?)` : ''}; expected one of ${BREAK_FORMS}`,
      );
    }
    const spec = VALUE_FIELD[kind];
    const raw: Record<string, unknown> = { kind };
    if (spec && !(kind === 'qa' && value === undefined))
      raw[spec.field] = spec.numeric ? Number(value) : value;
    const parsed = Breakpoint.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues.find((i) => i.code === 'custom')?.message;
      throw new UsageError(`--break ${flag}: ${why ?? `expected one of ${BREAK_FORMS}`}`);
    }
    return parsed.data;
  });
}
