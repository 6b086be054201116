import type { ToolResult } from '../../../shared/tool-result';

/**
 * The line above a raw result whose `"ok": true` sits beside a failing `"exit_code"`: read
 * alone, the JSON says success; `ok` is the tool's, the exit code the command's.
 */
export function rawResultNote(r: unknown): string | null {
  if (!r || typeof r !== 'object') return null;
  const { ok, exit_code: exit } = r as Partial<ToolResult>;
  if (ok !== true || typeof exit !== 'number' || exit === 0) return null;
  return `ok means the tool ran; the command's own exit code is exit_code (${exit}: it failed)`;
}
