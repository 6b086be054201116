import { BREAKPOINT_KINDS, Breakpoint, regexProblem } from '../../../shared/breakpoints';

/** Builds a breakpoint from the form, or says in words what is missing. */
export function breakpointFromForm(
  kind: Breakpoint['kind'],
  value: string,
  /** The task's tools, when known: a name outside them would never fire. */
  tools?: readonly string[],
): { ok: true; breakpoint: Breakpoint } | { ok: false; message: string } {
  const info = BREAKPOINT_KINDS.find((k) => k.kind === kind);
  if (!info) return { ok: false, message: `unknown kind ${kind}` };
  const raw: Record<string, unknown> = { kind };
  if (info.value) {
    const v = value.trim();
    if (v === '') return { ok: false, message: `Enter the ${info.value.label} first.` };
    if (info.value.numeric) {
      const n = Number(v);
      if (!Number.isFinite(n)) return { ok: false, message: `The ${info.value.label} must be a number.` };
      raw[info.value.field] = n;
    } else if (info.value.field === 'pattern') {
      const problem = regexProblem(v);
      if (problem) return { ok: false, message: `That pattern will not do: ${problem}.` };
      raw[info.value.field] = v;
    } else {
      if (!/^[A-Za-z0-9_.-]+$/.test(v))
        return { ok: false, message: `"${v}" is not a tool name: use letters, digits, _ . or -.` };
      // "Not offered" may name any tool; the others would never fire for a tool the task lacks.
      if (tools && kind !== 'request_no_tool' && !tools.includes(v))
        return { ok: false, message: `This task has no tool “${v}”. Its tools: ${tools.join(', ')}.` };
      raw[info.value.field] = v;
    }
  }
  const parsed = Breakpoint.safeParse(raw);
  if (!parsed.success) {
    const hint =
      kind === 'step'
        ? 'a step number from 1'
        : kind === 'repeat'
          ? 'a count of 2 or more'
          : kind === 'slow_step'
            ? 'a positive number of milliseconds'
            : 'a value';
    return { ok: false, message: `That ${info.value?.label ?? 'value'} will not do: enter ${hint}.` };
  }
  return { ok: true, breakpoint: parsed.data };
}
