import type { EventName } from './events.js';

// A plain list apart from the payload schemas, for the window's entry (see operation-names.ts).

/** Every event stream name, in declaration order (checked against the contract at compile time). */
export const EVENT_NAMES = [
  'episode.event',
  'episode.agentOutput',
  'episode.state',
  'episode.activity',
  'episode.released',
  'terminal.data',
  'terminal.exit',
  'sandbox.stats',
  'sandbox.statsEnd',
  'library.changed',
  'app.command',
  'batch.progress',
  'image.progress',
  'agents.progress',
] as const satisfies readonly EventName[];

// Compile-time: the list names every event stream of the contract, and only those.
const everyEvent: [Exclude<EventName, (typeof EVENT_NAMES)[number]>] extends [never] ? true : never = true;
void everyEvent;

const NAMES: ReadonlySet<string> = new Set(EVENT_NAMES);

/** True when `name` is a contract event. */
export function isEventName(name: string): name is EventName {
  return NAMES.has(name);
}
