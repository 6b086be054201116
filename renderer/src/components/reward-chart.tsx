import { memo, useMemo, useState, type MouseEvent } from 'react';
import type { StepRow } from '../../../shared/contract/models';
import { rewardColours } from '../model/reward-colour';
import { rewardLabel, rewardTitle } from '../../../shared/reward-label';
import type { VerifierReward } from '../stores/stepper/stepper-store';

const WIDTH = 600;
const HEIGHT = 44;
const MAX_BARS = 300;

interface Bucket {
  readonly first: number;
  readonly last: number;
  readonly parts: readonly (readonly [string, number])[];
}

/** The component the verifier's final reward is drawn as: the trace's name for it (shared/rewards.ts). */
const VERIFIER = 'verifier';

/**
 * Reward components per step, summed into at most MAX_BARS buckets so 10,000 steps stay light;
 * the verifier's final reward stacked on the step it was recorded at, as the return folds it in.
 */
function buckets(
  rows: readonly StepRow[],
  verifier: VerifierReward | null,
): {
  items: Bucket[];
  names: string[];
  negative: ReadonlySet<string>;
  max: number;
} {
  const size = Math.max(1, Math.ceil(rows.length / MAX_BARS));
  const names = new Set<string>();
  const negative = new Set<string>();
  const items: Bucket[] = [];
  let max = 0;
  for (let i = 0; i < rows.length; i += size) {
    const sums = new Map<string, number>();
    for (let j = i; j < Math.min(rows.length, i + size); j++)
      for (const [k, v] of Object.entries(rows[j].rewards)) {
        names.add(k);
        if (v < 0) negative.add(k);
        sums.set(k, (sums.get(k) ?? 0) + v);
      }
    if (
      verifier &&
      verifier.step >= rows[i].step &&
      verifier.step <= rows[Math.min(rows.length, i + size) - 1].step
    ) {
      names.add(VERIFIER);
      if (verifier.reward < 0) negative.add(VERIFIER);
      sums.set(VERIFIER, (sums.get(VERIFIER) ?? 0) + verifier.reward);
    }
    const parts = [...sums.entries()];
    max = Math.max(
      max,
      parts.reduce((a, [, v]) => a + Math.abs(v), 0),
    );
    items.push({ first: rows[i].step, last: rows[Math.min(rows.length, i + size) - 1].step, parts });
  }
  return { items, names: [...names].sort(), negative, max };
}

/**
 * The stacked bars as one SVG path per component (rectangles as subpaths): a 10,000-step
 * trace drew 300 groups of a title and rects each — over a thousand SVG elements created
 * on the open and again as every page of earlier rows arrived (issue 19.10).
 */
function barPaths(items: readonly Bucket[], names: readonly string[], max: number): Map<string, string> {
  const w = barWidth(items.length);
  const mid = HEIGHT / 2;
  const scale = max > 0 ? (mid - 2) / max : 0;
  const paths = new Map<string, string[]>(names.map((n) => [n, []]));
  items.forEach((b, i) => {
    let up = mid;
    let down = mid;
    for (const [k, v] of b.parts) {
      const h = Math.abs(v) * scale;
      const y = v >= 0 ? (up -= h) : down;
      if (v < 0) down += h;
      paths
        .get(k)
        ?.push(
          `M${r(i * w + w * 0.1)} ${r(y)}h${r(Math.max(w * 0.8, 0.5))}v${r(h)}h${r(-Math.max(w * 0.8, 0.5))}z`,
        );
    }
  });
  return new Map([...paths].map(([k, d]) => [k, d.join('')]));
}

/** Few steps keep thin bars at the left instead of stretching across the chart. */
function barWidth(count: number): number {
  return Math.min(WIDTH / count, 6);
}

function r(n: number): string {
  return String(Math.round(n * 100) / 100);
}

function bucketText(b: Bucket): string {
  return `step ${b.first}${b.last !== b.first ? `–${b.last}` : ''}: ${b.parts.map(([k, v]) => `${rewardLabel(k)} ${v.toFixed(2)}`).join(', ')}`;
}

/**
 * Reward components per step as stacked bars in inline SVG; click a bar to view its step.
 * Memoized: the timeline renders twice on a far slider move (the step, then the rows drawn
 * for its place), and the chart's output depends on the step alone.
 */
export const RewardChart = memo(function RewardChart(props: {
  readonly rows: readonly StepRow[];
  readonly viewed: number | null;
  readonly onSelect: (step: number) => void;
  /** The verifier's final reward and its step, once the branch ended (its summary's). */
  readonly verifier?: VerifierReward | null;
}) {
  const verifier = props.verifier ?? null;
  const { items, names, negative, max } = useMemo(
    () => buckets(props.rows, verifier),
    [props.rows, verifier],
  );
  const paths = useMemo(() => barPaths(items, names, max), [items, names, max]);
  const colours = useMemo(() => rewardColours(names), [names]);
  // The bar under the pointer: its title is the one tooltip (a title per bar was a node per bar).
  const [hover, setHover] = useState<number | null>(null);
  if (names.length === 0) return null;
  const w = barWidth(items.length);
  const at =
    props.viewed === null ? -1 : items.findIndex((b) => props.viewed! >= b.first && props.viewed! <= b.last);
  // The bar at the pointer, from its x in the chart's own units (the SVG stretches to its box).
  const barAt = (e: MouseEvent<SVGRectElement>): number | null => {
    const box = e.currentTarget.ownerSVGElement?.getBoundingClientRect();
    if (!box || box.width === 0) return null;
    const i = Math.floor((((e.clientX - box.left) / box.width) * WIDTH) / w);
    return i >= 0 && i < items.length ? i : null;
  };
  const shown = hover !== null ? items[hover] : undefined;
  return (
    <div className="reward-chart" data-testid="reward-chart">
      <div className="chart-plot">
        {/* The viewed step's mark, a layer of its own behind the bars: moving it while scrubbing
          repaints only itself, not the chart's every bar (issue 19.10). */}
        {at >= 0 ? (
          <div
            className="cursor"
            data-testid="reward-chart-cursor"
            style={{ width: `${(w / WIDTH) * 100}%`, transform: `translateX(${at * 100}%)` }}
          />
        ) : null}
        <svg
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          preserveAspectRatio="none"
          role="img"
          aria-label="reward components per step"
        >
          <line x1={0} x2={WIDTH} y1={HEIGHT / 2} y2={HEIGHT / 2} className="axis" />
          {names.map((n) => (
            <path key={n} d={paths.get(n)} fill={colours.get(n)} />
          ))}
          <rect
            x={0}
            y={0}
            width={items.length * w}
            height={HEIGHT}
            className="hit"
            onMouseMove={(e) => setHover(barAt(e))}
            onMouseLeave={() => setHover(null)}
            onClick={(e) => {
              const i = barAt(e);
              if (i !== null) props.onSelect(items[i].first);
            }}
          >
            {shown ? <title>{bucketText(shown)}</title> : null}
          </rect>
        </svg>
      </div>
      <div className="legend">
        {names.map((n) => (
          <span
            key={n}
            data-testid="reward-legend"
            data-component={n}
            data-negative={negative.has(n) ? 'true' : undefined}
            title={
              n === VERIFIER && verifier
                ? `the verifier's final reward, at step ${verifier.step}: ${verifier.verdict}`
                : `${rewardTitle(n)}${negative.has(n) ? ': its penalties are drawn below the zero line' : ''}`
            }
          >
            <i style={{ background: colours.get(n) }} />
            {/* The verifier's reward says its value: it decides the episode, and it is one number. */}
            {/* A narrow timeline keeps the legend on one line: the words in .lg-more give way
                (the tooltip says them); the text is whole for a screen reader. */}
            {n === VERIFIER && verifier ? (
              <>
                verifier<span className="lg-more">&apos;s reward</span> {verifier.reward.toFixed(2)}
                <span className="lg-more"> (step {verifier.step})</span>
              </>
            ) : (
              <LegendLabel label={rewardLabel(n)} />
            )}
            {/* Which way its bars go: a penalty hangs below the line, a reward stands on it. */}
            {negative.has(n) ? <b className="legend-sign">↓</b> : null}
          </span>
        ))}
      </div>
    </div>
  );
});

/** A component's label whose last word " penalty" (said by its ↓ too) gives way in a narrow timeline. */
function LegendLabel(props: { readonly label: string }) {
  const base = props.label.replace(/ penalty$/, '');
  return base === props.label ? (
    <>{props.label}</>
  ) : (
    <>
      {base}
      <span className="lg-more"> penalty</span>
    </>
  );
}
