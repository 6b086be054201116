/** Parses Docker size syntax (`512m`, `1g`, `100k`, `1024b` or a plain byte count) into bytes; null when invalid. */
export function parseSize(input: string | number): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? Math.floor(input) : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)b?\s*$/i.exec(input);
  if (!m) return null;
  const units: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
  return Math.floor(Number(m[1]) * units[m[2].toLowerCase()]);
}
