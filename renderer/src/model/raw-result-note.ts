import type { ToolResult } from '../../../shared/tool-result';

/**
 * The line above a raw result whose `"ok": true` sits beside a failing `"exit_code"`: read
 * alone, the JSON says success; `ok` is the tool's, the exit code the command's. In a
 * person's words, agreeing with the facts' "exit 1 — the command failed" (it named fields).
 */
export function rawResultNote(r: unknown): string | null {
  if (!r || typeof r !== 'object') return null;
  const { ok, exit_code: exit } = r as Partial<ToolResult>;
  if (ok !== true || typeof exit !== 'number' || exit === 0) return null;
  return `The tool ran; the command itself failed (exit ${exit}).`;
}
