const UNITS: Readonly<Record<string, number>> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 };

/**
 * Parses `7d`, `12h`, `30m`, `45s`, `2w` (or a sum like `1d12h`) into ms; null when invalid.
 * One reader for every duration a person types (`stepbox gc --older-than`, settings.json).
 */
export function parseDuration(text: string): number | null {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)([smhdw])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) return null;
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]], 0);
}
