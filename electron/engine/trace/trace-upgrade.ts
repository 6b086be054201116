import { CURRENT_TRACE_SCHEMA } from '../../../shared/trace-events.js';

/** A raw event as parsed from a line, before validation. */
export type RawEvent = Record<string, unknown>;

/**
 * One step of the upgrade path: turns an event written under schema `from` into the
 * shape of schema `to`. Upgrades are pure functions on raw JSON, applied at read time;
 * files on disk are never rewritten (traces are append-only records).
 */
export interface TraceUpgrade {
  readonly from: string;
  readonly to: string;
  upgrade(event: RawEvent): RawEvent;
}

/**
 * The upgrade path, oldest first. `stepbox.trace/1` is the only schema so far, so it is
 * empty. To add v2:
 *  1. bump `TRACE_SCHEMA` in `shared/constants.ts` to `stepbox.trace/2` and change the
 *     zod schemas in `shared/trace-events.ts` to the v2 shapes;
 *  2. append `{from: 'stepbox.trace/1', to: 'stepbox.trace/2', upgrade}` here, where
 *     `upgrade` maps one v1 event to v2 (rename fields, fill new required ones);
 *  3. keep `test/fixtures/traces/v1/` and add `test/fixtures/traces/v2/`: the reader
 *     test reads every version's fixture with the current schema (one test per version).
 */
export const TRACE_UPGRADES: readonly TraceUpgrade[] = [];

/** Why a trace cannot be upgraded: its schema is unknown to this build (newer, or not a stepbox trace). */
export class UnsupportedSchemaError extends Error {
  readonly code = 'trace_corrupt';
  constructor(readonly schema: string) {
    super(
      `trace schema "${schema}" is not readable by this stepbox (it reads ${[
        ...new Set([...TRACE_UPGRADES.map((u) => u.from), CURRENT_TRACE_SCHEMA]),
      ].join(', ')}); upgrade stepbox to read it`,
    );
  }
}

/**
 * The chain of upgrades from `schema` to `target` (empty when equal); throws
 * {@link UnsupportedSchemaError} when there is no path.
 */
export function upgradePath(
  schema: string,
  upgrades: readonly TraceUpgrade[] = TRACE_UPGRADES,
  target: string = CURRENT_TRACE_SCHEMA,
): TraceUpgrade[] {
  const path: TraceUpgrade[] = [];
  let at = schema;
  while (at !== target) {
    const next = upgrades.find((u) => u.from === at);
    if (!next || path.includes(next)) throw new UnsupportedSchemaError(schema);
    path.push(next);
    at = next.to;
  }
  return path;
}

/** Applies an upgrade chain to one raw event; the header's `schema` ends as the target's. */
export function upgradeEvent(event: RawEvent, path: readonly TraceUpgrade[]): RawEvent {
  let out = event;
  for (const u of path) {
    out = u.upgrade(out);
    if (out.type === 'header') out = { ...out, schema: u.to };
  }
  return out;
}
