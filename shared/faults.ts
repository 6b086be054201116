import type { Task } from './task.js';

/** The task's fault settings (Contracts: Task file, `faults`). */
export type FaultSettings = Task['faults'];

/** A fault injected into one tool call. */
export type InjectedFault =
  | { readonly kind: 'latency'; readonly seconds: number }
  | { readonly kind: 'permission_error' }
  | { readonly kind: 'tool_failure' };

/**
 * A uniform number in [0, 1) from a string: FNV-1a 32-bit, then the murmur3 finalizer
 * so nearby inputs (`1:2:0`, `1:2:1`) land far apart. Pure and stable across platforms,
 * which is what lets re-execution replay reproduce every fault.
 */
export function unitHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 0x100000000;
}

/** True when the settings can inject anything; lets the registry skip the draw on the fast path. */
export function faultsEnabled(faults: FaultSettings): boolean {
  return (faults.latency?.rate ?? 0) > 0 || faults.permission_error > 0 || faults.tool_failure > 0;
}

/**
 * The faults for call `callIndex` (from 0) of step `step`: a pure function of
 * (seed, step, callIndex), one independent draw per kind. Latency may combine with a
 * failure; a permission error wins over a tool failure, so at most one failure applies.
 */
export function decideFaults(faults: FaultSettings, step: number, callIndex: number): InjectedFault[] {
  const draw = (kind: string) => unitHash(`${faults.seed}:${step}:${callIndex}:${kind}`);
  const out: InjectedFault[] = [];
  if (faults.latency && draw('latency') < faults.latency.rate) {
    out.push({ kind: 'latency', seconds: faults.latency.seconds });
  }
  if (draw('permission_error') < faults.permission_error) out.push({ kind: 'permission_error' });
  else if (draw('tool_failure') < faults.tool_failure) out.push({ kind: 'tool_failure' });
  return out;
}
