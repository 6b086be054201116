import { memo, useMemo } from 'react';
import type { StepRow } from '../../../shared/contract/models';

const WIDTH = 600;
const HEIGHT = 44;
const MAX_BARS = 300;
const PALETTE = ['#5fb3f9', '#8bd17c', '#f0b45a', '#d887f0', '#f07a7a', '#66d9c9'];

interface Bucket {
  readonly first: number;
  readonly last: number;
  readonly parts: readonly (readonly [string, number])[];
}

/** Reward components per step, summed into at most MAX_BARS buckets so 10,000 steps stay light. */
function buckets(rows: readonly StepRow[]): { items: Bucket[]; names: string[]; max: number } {
  const size = Math.max(1, Math.ceil(rows.length / MAX_BARS));
  const names = new Set<string>();
  const items: Bucket[] = [];
  let max = 0;
  for (let i = 0; i < rows.length; i += size) {
    const sums = new Map<string, number>();
    for (const r of rows.slice(i, i + size))
      for (const [k, v] of Object.entries(r.rewards)) {
        names.add(k);
        sums.set(k, (sums.get(k) ?? 0) + v);
      }
    const parts = [...sums.entries()];
    max = Math.max(
      max,
      parts.reduce((a, [, v]) => a + Math.abs(v), 0),
    );
    items.push({ first: rows[i].step, last: rows[Math.min(rows.length, i + size) - 1].step, parts });
  }
  return { items, names: [...names].sort(), max };
}

/** The bars: depend on the rows only, so scrubbing does not redraw them. */
const Bars = memo(function Bars(props: {
  readonly items: readonly Bucket[];
  readonly names: readonly string[];
  readonly max: number;
  readonly onSelect: (step: number) => void;
}) {
  const { items, names, max } = props;
  const color = (name: string) => PALETTE[names.indexOf(name) % PALETTE.length];
  // Few steps keep thin bars at the left instead of stretching across the chart.
  const w = Math.min(WIDTH / items.length, 6);
  const mid = HEIGHT / 2;
  const scale = max > 0 ? (mid - 2) / max : 0;
  return (
    <>
      {items.map((b, i) => {
        let up = mid;
        let down = mid;
        return (
          <g key={b.first} onClick={() => props.onSelect(b.first)}>
            <title>{`step ${b.first}${b.last !== b.first ? `–${b.last}` : ''}: ${b.parts.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`}</title>
            <rect x={i * w} y={0} width={w} height={HEIGHT} className="hit" />
            {b.parts.map(([k, v]) => {
              const h = Math.abs(v) * scale;
              const y = v >= 0 ? (up -= h) : down;
              if (v < 0) down += h;
              return (
                <rect
                  key={k}
                  x={i * w + w * 0.1}
                  y={y}
                  width={Math.max(w * 0.8, 0.5)}
                  height={h}
                  fill={color(k)}
                />
              );
            })}
          </g>
        );
      })}
    </>
  );
});

/** Reward components per step as stacked bars in inline SVG; click a bar to view its step. */
export function RewardChart(props: {
  readonly rows: readonly StepRow[];
  readonly viewed: number | null;
  readonly onSelect: (step: number) => void;
}) {
  const { items, names, max } = useMemo(() => buckets(props.rows), [props.rows]);
  if (names.length === 0) return null;
  const w = Math.min(WIDTH / items.length, 6);
  const at =
    props.viewed === null ? -1 : items.findIndex((b) => props.viewed! >= b.first && props.viewed! <= b.last);
  const color = (name: string) => PALETTE[names.indexOf(name) % PALETTE.length];
  return (
    <div className="reward-chart" data-testid="reward-chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label="reward components per step"
      >
        {at >= 0 ? <rect x={at * w} y={0} width={w} height={HEIGHT} className="cursor" /> : null}
        <line x1={0} x2={WIDTH} y1={HEIGHT / 2} y2={HEIGHT / 2} className="axis" />
        <Bars items={items} names={names} max={max} onSelect={props.onSelect} />
      </svg>
      <div className="legend">
        {names.map((n) => (
          <span key={n}>
            <i style={{ background: color(n) }} />
            {n}
          </span>
        ))}
      </div>
    </div>
  );
}
