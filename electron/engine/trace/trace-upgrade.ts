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

/** The schemas this build reads: the current one and every one it can upgrade from. */
export function readableSchemas(upgrades: readonly TraceUpgrade[] = TRACE_UPGRADES): string[] {
  return [...new Set([...upgrades.map((u) => u.from), CURRENT_TRACE_SCHEMA])];
}

/** Whether `schema` is a stepbox trace schema newer than this build's, older, or not one at all. */
export function schemaAge(schema: string): 'newer' | 'older' | 'foreign' {
  const version = (s: string) => /^stepbox\.trace\/(\d+)$/.exec(s)?.[1];
  const theirs = version(schema);
  const ours = version(CURRENT_TRACE_SCHEMA);
  if (theirs === undefined || ours === undefined) return 'foreign';
  return Number(theirs) > Number(ours) ? 'newer' : 'older';
}

/**
 * What to tell a person about a trace of `schema` this build cannot read: made by a newer
 * stepbox (upgrade), by an older one whose format this build no longer reads (open it with
 * that version), or not a stepbox trace at all.
 */
export function unreadableSchemaMessage(schema: string): string {
  const reads = `this stepbox reads ${readableSchemas().join(', ')}`;
  switch (schemaAge(schema)) {
    case 'newer':
      return `made by a newer stepbox version (trace schema "${schema}"; ${reads}): upgrade stepbox to open it`;
    case 'older':
      return `made by an older stepbox version (trace schema "${schema}"; ${reads}, and cannot upgrade it): open it with the stepbox version that wrote it, or run the task again`;
    case 'foreign':
      return `not a stepbox trace this version knows (schema "${schema}"; ${reads})`;
  }
}

/** Why a trace cannot be upgraded: its schema is unknown to this build (newer, older, or not a stepbox trace). */
export class UnsupportedSchemaError extends Error {
  readonly code = 'trace_corrupt';
  /** The fix the CLI prints (not the damaged-store one: nothing is damaged). */
  readonly fix: string;
  constructor(
    readonly schema: string,
    /** The trace file of that schema, when known (the reader adds it). */
    readonly file: string | null = null,
  ) {
    super(`trace ${unreadableSchemaMessage(schema)}`);
    const age = schemaAge(schema);
    this.fix =
      age === 'newer'
        ? 'upgrade stepbox (npm install stepbox@latest)'
        : age === 'older'
          ? 'open it with the stepbox version that wrote it'
          : 'this file is not a stepbox trace; remove it from the store';
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
