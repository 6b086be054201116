/** Escapes text for HTML and SVG, and defangs URLs so the report links nowhere. */
export function esc(text: unknown): string {
  return String(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/(https?):\/\//gi, '$1[:]//');
}

/** Counts of values in `bins` equal-width bins over [min, max]. */
export function histogram(values: readonly number[], bins: number, min: number, max: number): number[] {
  const counts = new Array<number>(bins).fill(0);
  const width = (max - min) / bins || 1;
  for (const v of values) counts[Math.min(bins - 1, Math.max(0, Math.floor((v - min) / width)))]++;
  return counts;
}

const W = 420;
const H = 160;
const PAD = 28;

/** An inline SVG bar chart (no xmlns needed inside HTML, so the file names no URL). */
export function barChart(labels: readonly string[], counts: readonly number[], title: string): string {
  const max = Math.max(1, ...counts);
  const bw = (W - 2 * PAD) / Math.max(1, counts.length);
  const bars = counts
    .map((c, i) => {
      const h = ((H - 2 * PAD) * c) / max;
      const x = PAD + i * bw;
      const y = H - PAD - h;
      return (
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${h.toFixed(1)}" class="bar"><title>${esc(labels[i])}: ${c}</title></rect>` +
        (c ? `<text x="${(x + bw / 2).toFixed(1)}" y="${(y - 3).toFixed(1)}" class="n">${c}</text>` : '') +
        `<text x="${(x + bw / 2).toFixed(1)}" y="${H - PAD + 12}" class="lbl">${esc(labels[i])}</text>`
      );
    })
    .join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}"><text x="${PAD}" y="14" class="title">${esc(title)}</text>${bars}<line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" class="axis"/></svg>`;
}

/** An inline SVG of one polyline per series (cumulative reward per step). */
export function lineChart(
  series: readonly { name: string; points: readonly [number, number][] }[],
  title: string,
): string {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return `<p class="muted">${esc(title)}: no rewards recorded.</p>`;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [x0, x1] = [Math.min(0, ...xs), Math.max(1, ...xs)];
  const [y0, y1] = [Math.min(0, ...ys), Math.max(0.001, ...ys)];
  const sx = (x: number) => PAD + ((W - 2 * PAD) * (x - x0)) / (x1 - x0 || 1);
  const sy = (y: number) => H - PAD - ((H - 2 * PAD) * (y - y0)) / (y1 - y0 || 1);
  const lines = series
    .map(
      (s, i) =>
        `<polyline class="line c${i % 8}" points="${s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"><title>${esc(s.name)}</title></polyline>`,
    )
    .join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}"><text x="${PAD}" y="14" class="title">${esc(title)}</text>${lines}<line x1="${PAD}" y1="${sy(0).toFixed(1)}" x2="${W - PAD}" y2="${sy(0).toFixed(1)}" class="axis"/><text x="${PAD - 4}" y="${sy(y1).toFixed(1)}" class="lbl" text-anchor="end">${y1.toFixed(2)}</text><text x="${PAD - 4}" y="${sy(y0).toFixed(1)}" class="lbl" text-anchor="end">${y0.toFixed(2)}</text><text x="${W - PAD}" y="${H - PAD + 12}" class="lbl">step ${x1}</text></svg>`;
}
