import { lazy, Suspense } from 'react';

const Json = lazy(() => import('./json-view').then((m) => ({ default: m.JsonView })));
const Diff = lazy(() => import('./json-view').then((m) => ({ default: m.FileDiffView })));
const Whole = lazy(() => import('./json-view').then((m) => ({ default: m.FileWholeView })));

const loading = <div className="state state-loading">Loading editor…</div>;

/** Read-only JSON in Monaco, loaded on first use. */
export function JsonView(props: {
  readonly model: string;
  /** What the model shows (branch/step): models are keyed by it, never reused across steps. */
  readonly scope: string;
  readonly value: string;
  readonly height?: number | string;
}) {
  return (
    <Suspense fallback={loading}>
      <Json {...props} />
    </Suspense>
  );
}

/** A file's before/after in Monaco's diff editor, loaded on first use. */
export function FileDiffView(props: {
  readonly path: string;
  readonly scope: string;
  readonly before: string;
  readonly after: string;
}) {
  return (
    <Suspense fallback={loading}>
      <Diff {...props} />
    </Suspense>
  );
}

/** A file added (or removed) whole by a step, every line marked, loaded on first use. */
export function FileWholeView(props: {
  readonly path: string;
  readonly scope: string;
  readonly text: string;
  readonly side: 'added' | 'removed';
}) {
  return (
    <Suspense fallback={loading}>
      <Whole {...props} />
    </Suspense>
  );
}

/** Pretty JSON of anything (undefined shows as null). */
export function pretty(value: unknown): string {
  return JSON.stringify(value ?? null, null, 2);
}
