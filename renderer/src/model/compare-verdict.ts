import type { CompareRow, PairVerdict } from '../../../shared/contract/models';

/** Each verdict in words a person reads. */
export const VERDICT_TEXT: Record<PairVerdict, string> = {
  same: 'same',
  different_action: 'different action',
  different_result: 'different result',
  different_files: 'different files',
};

/**
 * A compare row's verdict with what differs, so a row whose two sides read alike still
 * says why it is not the same: `different result: stdout differs`, `different files: a.txt`,
 * `different action: execute_shell arguments: command differs` (the tool the same).
 */
export function verdictText(row: Pick<CompareRow, 'verdict' | 'differs' | 'workspace'>): string {
  const base = VERDICT_TEXT[row.verdict];
  const what =
    row.verdict === 'different_result' || row.verdict === 'different_action'
      ? (row.differs ?? [])
      : row.verdict === 'different_files'
        ? row.workspace.map((w) => w.path)
        : [];
  return what.length ? `${base}: ${what.join('; ')}` : base;
}
