/** Formats a duration in ms as `1h02m`, `3m05s` or `12s`. */
export function formatEta(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * A one-line progress bar with counts and an ETA from the rate so far:
 * `[########------------]  8/20  ok 7 fail 1  running 2  ETA 42s`.
 */
export function progressLine(p: {
  readonly done: number;
  readonly total: number;
  readonly ok: number;
  readonly running: number;
  readonly elapsedMs: number;
  readonly width?: number;
}): string {
  const width = p.width ?? 24;
  const filled = p.total ? Math.round((width * p.done) / p.total) : width;
  const eta = p.done > 0 ? formatEta((p.elapsedMs / p.done) * (p.total - p.done)) : '?';
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(p.done).padStart(String(p.total).length)}/${p.total}  ok ${p.ok} fail ${p.done - p.ok}  running ${p.running}  ETA ${p.done === p.total ? '0s' : eta}`;
}
