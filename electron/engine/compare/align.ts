/** One aligned pair: indices into the two sequences; null where one side has no counterpart. */
export interface AlignedPair {
  readonly a: number | null;
  readonly b: number | null;
}

/** Scores of the alignment (Needleman–Wunsch): equal keys are worth most, a gap costs as much as a mismatch. */
const MATCH = 2;
const MISMATCH = -1;
const GAP = -1;

/** Above this many cells the middle is paired index by index rather than aligned (memory is O(n·m)). */
const MAX_CELLS = 4_000_000;

/**
 * Aligns two sequences of keys so that an inserted or dropped element does not shift
 * everything after it: the common prefix and suffix are paired directly, the middle by
 * Needleman–Wunsch (a gap on one side is an insertion, a mismatch a substitution).
 */
export function alignKeys(a: readonly string[], b: readonly string[]): AlignedPair[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const pairs: AlignedPair[] = [];
  for (let i = 0; i < start; i++) pairs.push({ a: i, b: i });
  pairs.push(...alignMiddle(a, b, start, endA, start, endB));
  for (let i = 0; endA + i < a.length; i++) pairs.push({ a: endA + i, b: endB + i });
  return pairs;
}

function alignMiddle(
  a: readonly string[],
  b: readonly string[],
  a0: number,
  a1: number,
  b0: number,
  b1: number,
): AlignedPair[] {
  const n = a1 - a0;
  const m = b1 - b0;
  if (n === 0 || m === 0 || (n + 1) * (m + 1) > MAX_CELLS) return byIndex(a0, a1, b0, b1);
  const w = m + 1;
  const score = new Int32Array((n + 1) * w);
  // 0 diagonal, 1 up (a only), 2 left (b only)
  const move = new Uint8Array((n + 1) * w);
  for (let i = 1; i <= n; i++) {
    score[i * w] = i * GAP;
    move[i * w] = 1;
  }
  for (let j = 1; j <= m; j++) {
    score[j] = j * GAP;
    move[j] = 2;
  }
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= m; j++) {
      const diag = score[(i - 1) * w + j - 1] + (a[a0 + i - 1] === b[b0 + j - 1] ? MATCH : MISMATCH);
      const up = score[(i - 1) * w + j] + GAP;
      const left = score[i * w + j - 1] + GAP;
      // A tie between a gap and a substitution (only where the middles differ in length:
      // equal lengths pair position by position, the diagonal scoring better) takes the gap.
      // The traceback runs from the end, so the steps one branch has more of go last and the
      // first steps after the fork pair with each other: a fork that took write_file at step 3
      // where the other took execute_shell reads "3 vs 3", not "3 only here" with its final
      // answer paired against the other's step 3 (a QA reviewer's finding on Compare).
      if (up >= diag && up >= left) {
        score[i * w + j] = up;
        move[i * w + j] = 1;
      } else if (left >= diag) {
        score[i * w + j] = left;
        move[i * w + j] = 2;
      } else {
        score[i * w + j] = diag;
        move[i * w + j] = 0;
      }
    }
  }
  const out: AlignedPair[] = [];
  let i = n;
  let j = m;
  while (i > 0 || j > 0) {
    const mv = move[i * w + j];
    if (i > 0 && j > 0 && mv === 0) {
      out.push({ a: a0 + i - 1, b: b0 + j - 1 });
      i--;
      j--;
    } else if (i > 0 && (mv === 1 || j === 0)) {
      out.push({ a: a0 + i - 1, b: null });
      i--;
    } else {
      out.push({ a: null, b: b0 + j - 1 });
      j--;
    }
  }
  return out.reverse();
}

function byIndex(a0: number, a1: number, b0: number, b1: number): AlignedPair[] {
  const out: AlignedPair[] = [];
  for (let k = 0; a0 + k < a1 || b0 + k < b1; k++)
    out.push({ a: a0 + k < a1 ? a0 + k : null, b: b0 + k < b1 ? b0 + k : null });
  return out;
}
